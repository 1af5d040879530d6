// Suites against the real engine on stories260K (5 layers, dim 64, vocab 512, context 512).
#include <doctest/doctest.h>

#include "suites/agentic/agentic_suite.hpp"
#include "suites/decode_anatomy/decode_anatomy_suite.hpp"
#include "suites/engine_target.hpp"
#include "suites/error.hpp"
#include "suites/prompt_builder.hpp"
#include "suites/registry.hpp"
#include "suites/resources.hpp"
#include "suites/runner.hpp"
#include "suites/table.hpp"
#include "suites/ttft/ttft_suite.hpp"
#include "tests/test_data.hpp"

using namespace atlas::suites;

namespace {
atlas::engine::EngineOptions stories_options() {
  atlas::engine::EngineOptions o;
  o.model = atlas::test::stories_bin().string();
  o.tokenizer = atlas::test::stories_tok();
  o.backend.threads = 1;
  return o;
}
EngineTarget& stories() {
  static EngineTarget t(stories_options());
  return t;
}
}  // namespace

TEST_CASE("EngineTarget: ids, timestamps, cached and prefilled counts") {
  EngineTarget& t = stories();
  CHECK(t.name() == "engine:cpu");
  CHECK(t.context_length() == 512);
  const auto prompt = PromptBuilder(t.tokenizer()).prompt(20, 5);
  CHECK(prompt.front() == *t.tokenizer().bos_id());
  TargetRequest req;
  req.prompt_ids = prompt;
  req.max_new_tokens = 6;
  req.ignore_eos = true;
  req.reuse_prefix = false;
  t.reset_session();
  const TargetResponse cold = t.generate(req);
  REQUIRE(cold.ok);
  CHECK(cold.output_ids.size() == 6);
  CHECK(cold.token_t_ns.size() == 6);
  CHECK(cold.t_request_ns < cold.token_t_ns.front());
  CHECK(cold.cached_tokens == 0);
  CHECK(cold.prefilled_tokens == 20);
  req.reuse_prefix = true;
  const TargetResponse warm = t.generate(req);
  CHECK(warm.cached_tokens == 19);  // at least the last prompt token is run again
  CHECK(warm.prefilled_tokens == 1);
  CHECK(warm.output_ids == cold.output_ids);  // greedy: same output with or without reuse
  const auto p = t.provenance();
  CHECK(p["backend"] == "cpu");
  CHECK(p["options"]["backend"]["threads"] == 1);
  CHECK(p["model"]["format"] == "llama2c");
  CHECK(p["decode_graph_vetoes"].is_array());

  req.prompt_ids.assign(600, 5);
  const TargetResponse bad = t.generate(req);
  CHECK_FALSE(bad.ok);
  CHECK(bad.error.find("exceeds the context") != std::string::npos);
}

TEST_CASE("stories260K prompts avoid special and byte-fallback control ids") {
  const auto& tok = stories().tokenizer();
  const auto ids = ordinary_token_ids(tok);
  CHECK(std::find(ids.begin(), ids.end(), *tok.bos_id()) == ids.end());
  CHECK(std::find(ids.begin(), ids.end(), *tok.eos_id()) == ids.end());
  CHECK(ids.size() > 300);
  CHECK(PromptBuilder(tok).prompt(64, 1) == PromptBuilder(tok).prompt(64, 1));
}

TEST_CASE("agentic reuse counts on stories260K are exact") {
  EngineTarget& t = stories();
  const AgenticTrace trace = load_trace(resolve_resource("coding-agent", "traces"));
  const TraceRenderer render(t.tokenizer(), trace, 1);
  CHECK(render.token_budget() <= 512);
  const AgenticSessionResult s = run_agentic_session(t, trace, 1, 0.0);
  REQUIRE(s.turns.size() == 5);
  const int max_tokens[] = {16, 16, 12, 16, 24};
  int expected = 0;
  int prev_prompt = 0, prev_out = 0;
  for (std::size_t k = 0; k < s.turns.size(); ++k) {
    const auto& turn = s.turns[k];
    INFO("turn " << turn.turn);
    CHECK(turn.output_tokens == max_tokens[k]);
    CHECK(turn.expected_reused == expected);
    CHECK(turn.reused == expected);
    CHECK(turn.prefilled == turn.prompt_tokens - expected);
    if (k > 0) CHECK(turn.prompt_tokens > prev_prompt + prev_out);
    prev_prompt = turn.prompt_tokens;
    prev_out = turn.output_tokens;
    expected = turn.prompt_tokens + turn.output_tokens - 1;
  }
  // The rendered prompt sizes on tok512 (golden: they change only if the trace, the renderer or
  // the tokenizer changes).
  CHECK(s.turns[0].prompt_tokens == render.preamble().size() + render.message(0).size() + render.assistant_header().size());
  CHECK(s.turns[1].reused == s.turns[0].prompt_tokens + 15);
  CHECK(s.turns[1].prefilled == 1 + static_cast<int>(render.message(2).size() + render.assistant_header().size()));
  CHECK(s.turns[2].prefilled == 1 + static_cast<int>(render.message(4).size() + render.assistant_header().size()));
}

TEST_CASE("decode anatomy on the CPU backend: stage counts per token and n/a device columns") {
  EngineTarget& t = stories();
  SuiteOptions o;
  o.warmup = 0;
  o.repetitions = 2;
  o.config = {{"prompt_tokens", 16}, {"decode_tokens", 8}};
  const auto r = run_decode_anatomy_suite(t, o);
  CHECK(r.details["source"] == "cpu-stage-timer");
  CHECK(r.details["notes"].empty());
  // one forward per token: each per-layer stage runs n_layers = 5 times, lm_head once
  CHECK(r.metrics.at("stage_calls_per_token/attention").samples == std::vector<double>{5, 5});
  CHECK(r.metrics.at("stage_calls_per_token/lm_head").samples == std::vector<double>{1, 1});
  CHECK(r.metrics.count("launches_per_token/attention") == 0);
  const auto& fp = r.metrics.at("output_fingerprint").samples;
  CHECK(fp[0] == fp[1]);
  const Table table = table_from_json(r.details["table"]);
  bool attention_row = false;
  for (const auto& row : table.rows) {
    if (row[0] != "attention") continue;
    attention_row = true;
    CHECK(row[1] == "5.00");
    CHECK(row[2] == "n/a");
    CHECK(row[4] == "n/a");
    CHECK(row[5] == "n/a");
  }
  CHECK(attention_row);
}

TEST_CASE("TTFT suite on stories260K: warm requests reuse len - 1 tokens") {
  SuiteOptions o;
  o.warmup = 0;
  o.repetitions = 1;
  o.config = {{"lengths", {16, 448}}, {"decode_tokens", 2}};
  const auto r = run_ttft_suite(stories(), o);
  CHECK(r.metrics.at("cached_tokens/warm/len=448").samples == std::vector<double>{447});
  CHECK(r.metrics.at("cached_tokens/warm/len=16").samples == std::vector<double>{15});
  CHECK(r.metrics.at("ttft_ms/cold/len=448").samples[0] > r.metrics.at("ttft_ms/warm/len=448").samples[0]);
}

TEST_CASE("run_suite_set on stories260K: all four sections with samples") {
  SuiteSetRequest req;
  req.suites = expand_suite_names("all");
  req.config = parse_suite_set_config(nlohmann::json::parse(R"({
    "name": "tiny", "suites": {
      "ttft": {"warmup": 0, "repetitions": 1, "lengths": [16], "decode_tokens": 2},
      "agentic": {"warmup": 0, "repetitions": 1, "traces": ["retrieval-agent"]},
      "decode-anatomy": {"warmup": 0, "repetitions": 1, "prompt_tokens": 8, "decode_tokens": 4},
      "bfcl": {"categories": ["simple_python"], "per_category": 2, "max_new_tokens": 8}
    }})"),
                                     "tiny.json");
  req.data_dir = atlas::test::data_dir();
  const auto rec = run_suite_set(stories(), req);
  CHECK(rec.invalid_reason == "");
  REQUIRE(rec.suites.size() == 4);
  for (const char* name : {"ttft", "agentic", "decode-anatomy", "bfcl"}) {
    INFO(name);
    REQUIRE(rec.suites.count(name));
    CHECK_FALSE(rec.suites.at(name).metrics.empty());
    for (const auto& [m, metric] : rec.suites.at(name).metrics) {
      INFO(m);
      CHECK_FALSE(metric.samples.empty());
    }
  }
  CHECK(rec.config["target"]["backend"] == "cpu");
}

TEST_CASE("the shipped 512-token traces fit stories260K; the long one does not") {
  const auto& tok = stories().tokenizer();
  for (const char* name : {"coding-agent", "retrieval-agent", "coding-agent-long"}) {
    const AgenticTrace trace = load_trace(resolve_resource(name, "traces"));
    const int budget = TraceRenderer(tok, trace, 1).token_budget();
    MESSAGE(std::string(name) << " needs " << budget << " tokens");
    if (std::string(name) == "coding-agent-long") {
      CHECK(budget > 512);
      CHECK(budget <= 4096);
    } else {
      CHECK(budget <= 512);
    }
  }
}
