#include "suites/instructions/instruction_probe.hpp"

#include <string>

#include "suites/error.hpp"
#include "suites/instructions/callgrind_region.hpp"
#include "suites/prompt_builder.hpp"

namespace atlas::suites {

nlohmann::json ProbeReport::to_json() const {
  return {{"prefilled_tokens", prefilled_tokens},
          {"decoded_tokens", decoded_tokens},
          {"output_ids", output_ids},
          {"under_valgrind", under_valgrind}};
}

ProbeReport ProbeReport::from_json(const nlohmann::json& j) {
  try {
    ProbeReport r;
    r.prefilled_tokens = j.at("prefilled_tokens").get<int>();
    r.decoded_tokens = j.at("decoded_tokens").get<int>();
    r.output_ids = j.at("output_ids").get<std::vector<int>>();
    r.under_valgrind = j.at("under_valgrind").get<bool>();
    return r;
  } catch (const nlohmann::json::exception& e) {
    throw SuiteError("instruction probe report " + j.dump().substr(0, 200) + ": " + e.what());
  }
}

ProbeReport run_instruction_probe(const ProbeRequest& req) {
  if (req.engine.backend.name != "cpu") {
    throw SuiteError("instructions suite: backend '" + req.engine.backend.name +
                     "' cannot be counted under valgrind (only the CPU backend)");
  }
  if (req.prompt_tokens < 1 || req.decode_tokens < 1) {
    throw SuiteError("instructions suite: prompt_tokens = " + std::to_string(req.prompt_tokens) +
                     ", decode_tokens = " + std::to_string(req.decode_tokens) + " (both must be >= 1)");
  }
  engine::EngineOptions opts = req.engine;
  opts.backend.threads = 1;
  engine::Engine eng = engine::Engine::open(opts);
  const std::vector<int> prompt = PromptBuilder(eng.tokenizer()).prompt(req.prompt_tokens, req.seed);

  engine::GenerateRequest pre;
  pre.prompt_ids = prompt;
  pre.max_new_tokens = 1;  // the prompt's forward and its first sampled token, no decode step
  pre.reuse_prefix = false;
  engine::GenerateRequest dec;
  dec.max_new_tokens = req.decode_tokens;
  dec.reuse_prefix = true;  // only the fed-back token and the decode steps run

  auto& session = eng.session();
  // Loading ran uninstrumented (fast); the warm-up pass below is simulated but not counted, so
  // the measured pass starts with warm simulated caches and a warm allocator.
  callgrind::instrument_on();
  ProbeReport report;
  report.under_valgrind = callgrind::running_on_valgrind();
  for (int pass = 0; pass < 2; ++pass) {  // pass 0: warm-up, not collected
    const bool measured = pass == 1;
    session.reset();
    if (measured) {
      callgrind::zero();
      callgrind::collect_on();
    }
    const engine::GenerateResult first = session.generate(pre);
    if (measured) {
      callgrind::collect_off();
      callgrind::dump("prefill");
    }
    if (first.output_ids.empty()) throw SuiteError("instructions suite: the prefill generated no token");
    dec.prompt_ids = prompt;
    dec.prompt_ids.push_back(first.output_ids.front());
    if (measured) {
      callgrind::zero();
      callgrind::collect_on();
    }
    const engine::GenerateResult out = session.generate(dec);
    if (measured) {
      callgrind::collect_off();
      callgrind::dump("decode");
    }
    if (static_cast<int>(out.output_ids.size()) != req.decode_tokens) {
      throw SuiteError("instructions suite: decode generated " + std::to_string(out.output_ids.size()) + " of " +
                       std::to_string(req.decode_tokens) + " tokens (context full?)");
    }
    report.prefilled_tokens = first.prefilled;
    report.decoded_tokens = static_cast<int>(out.output_ids.size());
    report.output_ids = out.output_ids;
  }
  return report;
}

}  // namespace atlas::suites
