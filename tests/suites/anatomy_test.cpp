#include <doctest/doctest.h>

#include <sstream>

#include "fake_target.hpp"
#include "suites/ab/side_spec.hpp"
#include "suites/decode_anatomy/anatomy_table.hpp"
#include "suites/decode_anatomy/decode_anatomy_suite.hpp"

using namespace atlas::suites;

namespace {
AnatomyWindow cpu_like_window() {
  AnatomyWindow w;
  StageAnatomy a;
  a.stage = "attention";
  a.calls = 20;  // 5 layers x 4 tokens
  a.time_ns = 40'000;
  StageAnatomy l;
  l.stage = "lm_head";
  l.calls = 4;
  l.time_ns = 20'000;
  w.stages = {a, l};
  return w;
}

/// A fake anatomy source offering graph and eager modes; each test overrides what it observes.
struct TwoModeSource : AnatomySource {
  std::string name() const override { return "fake"; }
  std::string time_basis() const override { return "fake GPU time"; }
  void begin() override {}
  AnatomyWindow end() override { return {}; }
  std::vector<std::string> modes() const override { return {"graph", "eager"}; }
};

}  // namespace

TEST_CASE("anatomy table: unmeasured columns read n/a, never 0") {
  const Table t = anatomy_table(cpu_like_window(), 4, 100'000, "cpu-stage-timer", "host wall clock");
  REQUIRE(t.rows.size() == 4);  // attention, lm_head, other, token
  const auto& att = t.rows[0];
  CHECK(att[0] == "attention");
  CHECK(att[1] == "5.00");   // calls per token
  CHECK(att[2] == "n/a");    // launches
  CHECK(att[3] == "n/a");    // in graph
  CHECK(att[4] == "n/a");    // host syncs
  CHECK(att[5] == "n/a");    // copies
  CHECK(att[6] == "10.00");  // 40 us / 4 tokens
  CHECK(att[7] == "40.00%");  // of 25 us per token
  CHECK(t.rows[2][0] == "other (outside stages)");
  CHECK(t.rows[2][6] == "10.00");  // (100 - 60) us / 4
  CHECK(t.rows[2][7] == "40.00%");
  CHECK(t.rows[3][0] == "token (wall, instrumented pass)");
  CHECK(t.rows[3][2] == "n/a");
  CHECK(t.rows[3][6] == "25.00");

  std::ostringstream text, md;
  TextTablePrinter().print(t, text);
  MarkdownTablePrinter().print(t, md);
  CHECK(text.str().find(" 0.00") == std::string::npos);
  CHECK(md.str().find("| attention | 5.00 | n/a | n/a | n/a | n/a | 10.00 | 40.00% |") != std::string::npos);
}

TEST_CASE("anatomy table: a source that counts launches, graphs, syncs and copies shows them") {
  AnatomyWindow w = cpu_like_window();
  w.stages[0].launches = 40;
  w.stages[0].graph_launches = 40;
  w.stages[0].host_syncs = 0;
  w.stages[0].copies_h2d = 0;
  w.stages[0].copies_d2h = 4;
  w.stages[1].launches = 8;
  w.stages[1].graph_launches = 4;
  w.stages[1].host_syncs = 4;
  w.stages[1].copies_h2d = 0;
  w.stages[1].copies_d2h = 4;
  const Table t = anatomy_table(w, 4, 100'000, "cupti", "GPU kernel time");
  CHECK(t.rows[0][2] == "10.00");
  CHECK(t.rows[0][3] == "100.00%");
  CHECK(t.rows[0][4] == "0.00");
  CHECK(t.rows[0][5] == "0.00 / 1.00");
  CHECK(t.rows[1][3] == "50.00%");  // percentages as everywhere: common/number_format.hpp
  const auto& token = t.rows.back();
  CHECK(token[2] == "12.00");  // 48 launches / 4 tokens
  CHECK(token[3] == "91.67%");  // 44 of 48
  CHECK(token[4] == "1.00");
  CHECK(token[5] == "0.00 / 2.00");
}

TEST_CASE("window accumulation keeps unknown values unknown") {
  AnatomyWindow a = cpu_like_window(), b = cpu_like_window();
  b.stages[0].launches = 3;
  a.accumulate(b);
  CHECK(*a.stages[0].calls == 40);
  CHECK(*a.stages[0].time_ns == 80'000);
  CHECK_FALSE(a.stages[0].launches);
}

TEST_CASE("output fingerprint is FNV-1a 32 over little-endian ids") {
  CHECK(output_fingerprint({}) == 2166136261u);
  // bytes 01 00 00 00: FNV-1a 32 of "\x01\0\0\0"
  std::vector<int> one{1};
  CHECK(output_fingerprint(one) == 0xfb69b604u);
  std::vector<int> a{5, 6}, b{6, 5};
  CHECK(output_fingerprint(a) != output_fingerprint(b));
}

TEST_CASE("decode-anatomy suite on a wall-clock-only target") {
  atlas::test::FakeTarget target;
  SuiteOptions o;
  o.warmup = 0;
  o.repetitions = 2;
  o.config = {{"prompt_tokens", 8}, {"decode_tokens", 5}};
  const auto r = run_decode_anatomy_suite(target, o);
  // 5 tokens: first at base + 1 prefilled token, then 4 gaps of decode_ns.
  const double wall_us = (1'000'000 + 10'000 + 4 * 250'000) / 1e3;
  REQUIRE(r.metrics.at("us_per_token").samples.size() == 2);
  CHECK(r.metrics.at("us_per_token").samples[0] == doctest::Approx(wall_us / 5));
  CHECK(r.metrics.at("output_fingerprint").kind == atlas::records::MetricKind::counted);
  CHECK(r.metrics.at("output_fingerprint").samples[0] == r.metrics.at("output_fingerprint").samples[1]);
  CHECK(r.metrics.count("stage_us_per_token/attention") == 0);
  CHECK(r.details["notes"].empty());
  const Table t = table_from_json(r.details["table"]);
  REQUIRE(t.rows.size() == 1);
  CHECK(t.rows[0][0] == "token (wall, instrumented pass)");
  CHECK(t.rows[0][1] == "n/a");
}

TEST_CASE("decode-anatomy suite on a target that streams text only (an HTTP endpoint)") {
  // Endpoints send no token ids: the first token and the fingerprint come from the text, encoded
  // by the local tokenizer. With this exact tokenizer the result equals the ids run's.
  struct TextOnly : atlas::test::FakeTarget {
    atlas::suites::TargetResponse generate(const atlas::suites::TargetRequest& req) override {
      auto r = FakeTarget::generate(req);
      r.output_ids.clear();
      return r;
    }
  };
  SuiteOptions o;
  o.warmup = 0;
  o.repetitions = 1;
  o.config = {{"prompt_tokens", 8}, {"decode_tokens", 5}};
  atlas::test::FakeTarget with_ids;
  TextOnly text_only;
  const auto a = run_decode_anatomy_suite(with_ids, o);
  const auto b = run_decode_anatomy_suite(text_only, o);
  CHECK(b.metrics.at("output_fingerprint").samples == a.metrics.at("output_fingerprint").samples);
  CHECK(b.details["output_ids"] == a.details["output_ids"]);
  CHECK(b.metrics.at("us_per_token").samples.size() == 1);
  CHECK(b.details["notes"].empty());  // the decode request reused the whole prompt + first token
}

TEST_CASE("decode-anatomy suite measures every mode a source offers, side by side (graph and eager)") {
  // A fake two-mode backend: "graph" decodes at 200 us per token with one graph launch, "eager"
  // at 300 us with 10 host-issued launches; the source reports what the current mode does.
  struct TwoModes : atlas::test::FakeTarget, AnatomyProvider {
    std::string mode = "graph";
    atlas::suites::TargetResponse generate(const atlas::suites::TargetRequest& req) override {
      timing.decode_ns = mode == "graph" ? 200'000 : 300'000;
      return FakeTarget::generate(req);
    }
    std::unique_ptr<AnatomySource> make_anatomy_source() override {
      struct Source : TwoModeSource {
        TwoModes* t;
        explicit Source(TwoModes* target) : t(target) {}
        AnatomyWindow end() override {
          const double n = 5;  // decode_tokens below
          StageAnatomy s;
          s.stage = "attention";
          s.calls = n;
          s.launches = n * (t->mode == "graph" ? 1 : 10);
          s.graph_launches = t->mode == "graph" ? *s.launches : 0.0;
          s.host_syncs = n;
          s.copies_h2d = n;
          s.copies_d2h = n;
          s.time_ns = n * 100'000;
          AnatomyWindow w;
          w.stages = {s};
          return w;
        }
        void set_mode(std::string_view m) override { t->mode = std::string(m); }
        std::optional<bool> graph_captured() const override { return true; }
      };
      return std::make_unique<Source>(this);
    }
  } target;
  SuiteOptions o;
  o.warmup = 0;
  o.repetitions = 2;
  o.config = {{"prompt_tokens", 8}, {"decode_tokens", 5}};
  const auto r = run_decode_anatomy_suite(target, o);
  // The backend's own mode keeps the plain names; the other is prefixed.
  const double graph_us = (1'000'000 + 10'000 + 4 * 200'000) / 1e3 / 5, eager_us = (1'000'000 + 10'000 + 4 * 300'000) / 1e3 / 5;
  CHECK(r.metrics.at("us_per_token").samples[0] == doctest::Approx(graph_us));
  CHECK(r.metrics.at("eager/us_per_token").samples[0] == doctest::Approx(eager_us));
  CHECK(r.metrics.at("launches_per_token/attention").samples[0] == 1.0);
  CHECK(r.metrics.at("eager/launches_per_token/attention").samples[0] == 10.0);
  CHECK(r.metrics.at("eager/graph_launches_per_token/attention").samples[0] == 0.0);
  CHECK(r.metrics.at("decode_graph_captured").samples == std::vector<double>{1.0});
  CHECK(r.metrics.at("decode_graph_captured").kind == atlas::records::MetricKind::counted);
  CHECK(r.metrics.at("eager/output_fingerprint").samples[0] == r.metrics.at("output_fingerprint").samples[0]);
  REQUIRE(r.details["extra_tables"].size() == 2);  // the eager table, then the side-by-side one
  const Table side = table_from_json(r.details["extra_tables"][1]);
  CHECK(side.header == std::vector<std::string>{"per token", "graph", "eager"});
  CHECK(side.rows[0][1] == fmt_fixed(graph_us, 2));
  CHECK(side.rows[0][2] == fmt_fixed(eager_us, 2));
  CHECK(side.rows[2] == std::vector<std::string>{"kernels", "1.00", "10.00"});
  CHECK(side.rows[3] == std::vector<std::string>{"of them replayed from a graph", "1.00", "0.00"});
  CHECK(target.mode == "eager");  // the suite leaves restoring the mode to the source's owner
}

TEST_CASE("decode-anatomy suite: no counters-off run follows an instrumented one, in any mode") {
  // CUPTI stays attached to the process after a tracer is gone; a plain run after a traced one
  // measured ~3% slower on the H200. The log records what each request saw.
  struct Logged : atlas::test::FakeTarget, AnatomyProvider {
    std::vector<std::string> log;
    bool in_window = false;
    atlas::suites::TargetResponse generate(const atlas::suites::TargetRequest& req) override {
      if (req.max_new_tokens > 1) log.push_back(in_window ? "instrumented" : "plain");  // the timed decode requests
      return FakeTarget::generate(req);
    }
    std::unique_ptr<AnatomySource> make_anatomy_source() override {
      struct Source : TwoModeSource {
        Logged* t;
        explicit Source(Logged* target) : t(target) {}
        void begin() override { t->in_window = true; }
        AnatomyWindow end() override {
          t->in_window = false;
          return {};
        }
      };
      return std::make_unique<Source>(this);
    }
  } target;
  SuiteOptions o;
  o.warmup = 1;
  o.repetitions = 2;
  o.config = {{"prompt_tokens", 8}, {"decode_tokens", 5}, {"series_tokens", 16}};
  (void)run_decode_anatomy_suite(target, o);
  // 2 modes x (1 warm-up + 2 repetitions + the latency series) plain decode runs, then
  // 2 x 3 instrumented ones.
  std::vector<std::string> want(8, "plain");
  want.resize(14, "instrumented");
  CHECK(target.log == want);
}

#ifdef ATLAS_HAVE_CUDA
// CUPTI kernel names (no device needed: name handling only).
#include "suites/decode_anatomy/cupti_tracer.hpp"

TEST_CASE("short kernel names: demangled, no namespaces or parameters; casts inside template arguments kept") {
  using atlas::suites::short_kernel_name;
  CHECK(short_kernel_name("_ZN5atlas7kernels49_GLOBAL__N__8136a72a_16_flash_prefill_cu_0b3d2a6520flash_prefill_"
                          "kernelILi128EEEvNS0_16FlashPrefillArgsE") == "flash_prefill_kernel<128>");
  // The first '(' is inside the template arguments: cutting there merged every GEMV variant.
  CHECK(short_kernel_name("_ZN5atlas7kernels12_GLOBAL__N_117gemv_async_kernelIfLNS0_9GemvInputE1ELi2EEEvPKT_i") ==
        "gemv_async_kernel<float, (atlas::kernels::GemvInput)1, 2>");
  CHECK(short_kernel_name("nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_TNT") ==
        "nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_TNT");
}
#endif  // ATLAS_HAVE_CUDA

TEST_CASE("decode-anatomy suite: the routing fingerprint of each plain run (reset before it), also through an A/B side's wrapper") {
  // A fake moe backend whose routing hash counts the generate calls since its reset.
  struct Routed : atlas::test::FakeTarget {
    std::uint64_t calls = 0;
    atlas::suites::TargetResponse generate(const atlas::suites::TargetRequest& req) override {
      ++calls;
      return FakeTarget::generate(req);
    }
    std::optional<std::uint64_t> routing_fingerprint() override { return (std::uint64_t{7} << 32) | calls; }
    void reset_routing_fingerprint() override { calls = 0; }
  };
  SuiteOptions o;
  o.warmup = 1;
  o.repetitions = 2;
  o.config = {{"prompt_tokens", 8}, {"decode_tokens", 5}};
  Routed plain;
  const auto r = run_decode_anatomy_suite(plain, o);
  const auto& m = r.metrics.at("routing_fingerprint");
  CHECK(m.kind == atlas::records::MetricKind::counted);
  CHECK(m.unit == "fnv1a32");
  // A run is two requests (the prompt, then the decode that reuses it): calls = 2 after the
  // reset, folded to 32 bits (high ^ low): 7 ^ 2 = 5, one sample per measured run (without the
  // reset the warm-up's calls would carry over: 7 ^ 4, 7 ^ 6).
  CHECK(m.samples == std::vector<double>{5.0, 5.0});
  EnvScopedTarget wrapped(std::make_unique<Routed>(), {});
  CHECK(run_decode_anatomy_suite(wrapped, o).metrics.at("routing_fingerprint").samples == std::vector<double>{5.0, 5.0});
  atlas::test::FakeTarget dense;
  CHECK(run_decode_anatomy_suite(dense, o).metrics.count("routing_fingerprint") == 0);
}

TEST_CASE("decode-anatomy suite: graph_replay_fraction per mode from the source's graph accounting") {
  // Graph mode replays 3 of 4 steps (one step vetoed, say); eager replays none.
  struct Accounted : atlas::test::FakeTarget, AnatomyProvider {
    std::string mode = "graph";
    std::unique_ptr<AnatomySource> make_anatomy_source() override {
      struct Source : TwoModeSource {
        Accounted* t;
        int takes = 0;
        explicit Source(Accounted* target) : t(target) {}
        void set_mode(std::string_view m) override { t->mode = std::string(m); }
        std::optional<GraphAccounting> take_graph_accounting() override {
          GraphAccounting g;
          if (takes++ % 2 == 0) return g;  // the take before a mode's runs
          g.captures = 1;
          g.capture_ms = 2.5;
          g.replayed_steps = t->mode == "graph" ? 3 : 0;
          g.eager_steps = t->mode == "graph" ? 1 : 4;
          return g;
        }
      };
      return std::make_unique<Source>(this);
    }
  } target;
  SuiteOptions o;
  o.warmup = 0;
  o.repetitions = 1;
  o.config = {{"prompt_tokens", 8}, {"decode_tokens", 5}};
  const auto r = run_decode_anatomy_suite(target, o);
  CHECK(r.metrics.at("graph_replay_fraction").samples == std::vector<double>{0.75});
  CHECK(r.metrics.at("graph_replay_fraction").kind == atlas::records::MetricKind::counted);
  CHECK(r.metrics.at("eager/graph_replay_fraction").samples == std::vector<double>{0.0});
  CHECK(r.details["graph_accounting"]["graph"]["capture_ms"] == 2.5);
  CHECK(r.details["graph_accounting"]["eager"]["eager_steps"] == 4);
}
