// atlas-bench generate: run one prompt through the engine and print the text (streamed) or one
// JSON object with ids, text, set-up time, TTFT and decode speed.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/clock.hpp"
#include "common/exit_code.hpp"
#include "common/number_format.hpp"
#include "engine/engine.hpp"
#include "tools/atlas-bench/command.hpp"

namespace atlas::cli {
namespace {

struct GenerateOptions {
  std::string model;
  std::string tokenizer;
  std::string prompt;
  int max_tokens = 64;
  float temperature = 0.0f;
  float top_p = 1.0f;
  int top_k = 0;
  std::uint64_t seed = 0;
  std::string backend = "cpu";
  int threads = 0;
  int max_seq_len = 0;
  bool json = false;
  std::optional<bool> warmup;  ///< unset: on for cuda, off for cpu
};

int run_generate(const GenerateOptions& o) {
  using namespace atlas::engine;
  EngineOptions eo;
  eo.model = o.model;
  eo.tokenizer = o.tokenizer;
  eo.max_seq_len = o.max_seq_len;
  eo.backend.name = o.backend;
  eo.backend = backend_options_from_env(eo.backend);
  if (o.threads > 0) eo.backend.threads = o.threads;
  const std::int64_t t_open = now_ns();
  Engine engine = Engine::open(eo);
  const double load_ms = static_cast<double>(now_ns() - t_open) / 1e6;
  const Tokenizer& tok = engine.tokenizer();

  GenerateRequest req;
  req.prompt_ids = tok.encode(o.prompt, /*add_bos=*/true);
  req.max_new_tokens = o.max_tokens;
  req.sampling.temperature = o.temperature;
  req.sampling.top_p = o.top_p;
  req.sampling.top_k = o.top_k;
  req.sampling.seed = o.seed;
  req.stop_ids = tok.stop_ids();
  // Generation also ends when the context is full (stop: context_full): the token sampled after
  // the last position is the last one. Say so up front rather than end short without a word.
  const long long room = static_cast<long long>(engine.backend().max_seq_len()) - static_cast<long long>(req.prompt_ids.size()) + 1;
  if (room >= 0 && req.max_new_tokens > room) {
    std::fprintf(stderr, "generate: --max-tokens %d is more than the context leaves (max_seq_len %d - %zu prompt tokens + 1): at most %lld new tokens, then stop: context_full\n",
                 req.max_new_tokens, engine.backend().max_seq_len(), req.prompt_ids.size(), room);
  }

  // One-time set-up that happens on the first request (CUDA: kernel module loading, cuBLAS
  // handles and workspaces, decode-graph capture; ~150 ms) is not time to first token: an
  // unmeasured warm-up request (the same prompt, two new tokens) takes it, and is reported apart.
  const bool warmup = o.warmup.value_or(o.backend == "cuda");
  std::optional<double> warmup_ms;
  if (warmup) {
    GenerateRequest w = req;
    w.max_new_tokens = std::min(2, req.max_new_tokens);
    w.reuse_prefix = false;
    const std::int64_t t0 = now_ns();
    (void)engine.session().generate(w, nullptr);
    warmup_ms = static_cast<double>(now_ns() - t0) / 1e6;
    req.reuse_prefix = false;  // the measured request prefills the whole prompt again
  }

  StreamDecoder stream(tok, req.prompt_ids.back());
  const GenerateResult r = engine.session().generate(req, [&](const TokenEvent& e) {
    if (o.json) return;
    std::cout << stream.push(e.id) << std::flush;
  });

  const double ttft_ms = r.output_ids.empty() ? 0.0 : static_cast<double>(r.token_t_ns.front() - r.t_start_ns) / 1e6;
  // Decode speed: tokens after the first over the time after the first (TPOT's inverse).
  double decode_tok_s = 0.0;
  if (r.output_ids.size() >= 2) {
    const double s = static_cast<double>(r.token_t_ns.back() - r.token_t_ns.front()) / 1e9;
    decode_tok_s = s > 0 ? static_cast<double>(r.output_ids.size() - 1) / s : 0.0;
  }
  if (o.json) {
    nlohmann::json j;
    j["model"] = engine.model().config.name;
    j["backend"] = std::string(engine.backend().name());
    j["prompt_ids"] = req.prompt_ids;
    j["output_ids"] = r.output_ids;
    j["text"] = tok.decode(r.output_ids, req.prompt_ids.back());
    j["load_ms"] = load_ms;  // model load and backend creation
    j["warmup"] = warmup;
    j["warmup_ms"] = warmup_ms ? nlohmann::json(*warmup_ms) : nlohmann::json(nullptr);
    j["setup_ms"] = load_ms + warmup_ms.value_or(0.0);
    j["ttft_ms"] = ttft_ms;  // after the set-up: prompt submitted -> first token
    j["decode_tok_s"] = decode_tok_s;
    j["prefix_reused"] = r.prefix_reused;
    j["stop"] = to_string(r.stop);
    std::cout << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    std::cout << stream.flush() << "\n";
    std::string setup = "set-up " + format_number(load_ms + warmup_ms.value_or(0.0)) + " ms (load " + format_number(load_ms) + " ms";
    if (warmup_ms) setup += ", warm-up " + format_number(*warmup_ms) + " ms";
    setup += ")";
    std::fprintf(stderr, "[%zu prompt tokens, %zu new tokens, %s, TTFT %s ms, decode %s tok/s, stop: %s]\n",
                 req.prompt_ids.size(), r.output_ids.size(), setup.c_str(), format_number(ttft_ms).c_str(),
                 format_number(decode_tok_s).c_str(), to_string(r.stop));
  }
  return to_int(ExitCode::pass);
}

const RegisterCommand reg{Command{
    "generate", "Generate text from a prompt with the engine (streams text, or --json for one JSON object)",
    [](CLI::App& sub, const GlobalOptions&) -> std::function<int()> {
      auto o = std::make_shared<GenerateOptions>();
      sub.add_option("--model", o->model, "Model file (llama2.c .bin, GGUF), directory (safetensors) or preset:<name>[@seed]")->required();
      sub.add_option("--tokenizer", o->tokenizer, "llama2.c tokenizer (tok*.bin), or a tokenizer.json for a safetensors model directory; for a GGUF file either one replaces its own (default: beside the model / in the file)");
      sub.add_option("--prompt", o->prompt, "Prompt text (BOS is prepended when the model uses one)");
      sub.add_option("--max-tokens", o->max_tokens, "New tokens to generate at most; generation also stops when the context (--max-seq-len) is full, with stop: context_full and a note when --max-tokens asked for more")->check(CLI::NonNegativeNumber);
      sub.add_option("--temperature", o->temperature, "Sampling temperature (0 = greedy)")->check(CLI::NonNegativeNumber);
      sub.add_option("--top-p", o->top_p, "Nucleus sampling mass (1 = off)")->check(CLI::Range(0.0, 1.0));
      sub.add_option("--top-k", o->top_k, "Top-k sampling (0 = off)")->check(CLI::NonNegativeNumber);
      sub.add_option("--seed", o->seed, "Sampling seed");
      sub.add_option("--backend", o->backend, "cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}));
      sub.add_option("--threads", o->threads, "CPU threads (default: $ATLAS_THREADS, else all cores)")->check(CLI::NonNegativeNumber);
      sub.add_option("--max-seq-len", o->max_seq_len, "Context length (KV cache capacity; default: the model's)")
          ->check(CLI::NonNegativeNumber);
      sub.add_flag("--json", o->json,
                   "Print one JSON object: prompt_ids, output_ids, text, load_ms, warmup_ms, setup_ms, ttft_ms, decode_tok_s");
      sub.add_flag_callback(
          "--warmup", [o] { o->warmup = true; },
          "Run an unmeasured warm-up request first, so one-time set-up is reported as set-up, not TTFT "
          "(default: on for cuda, off for cpu)");
      sub.add_flag_callback("--no-warmup", [o] { o->warmup = false; }, "No warm-up request: TTFT includes one-time set-up");
      return [o] { return run_generate(*o); };
    }}};

}  // namespace
}  // namespace atlas::cli
