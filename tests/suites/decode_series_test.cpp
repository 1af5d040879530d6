// The decode-anatomy suite's latency series, depths, roofline and graph-veto columns, on fakes.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "fake_target.hpp"
#include "suites/decode_anatomy/anatomy_source.hpp"
#include "suites/decode_anatomy/decode_anatomy_suite.hpp"
#include "suites/decode_anatomy/host_event_stages.hpp"
#include "suites/decode_anatomy/latency_series.hpp"
#include "suites/error.hpp"
#include "suites/table.hpp"

using namespace atlas::suites;

namespace {
std::vector<double> noisy(int n, double median_us, double sd_us, unsigned seed) {
  std::mt19937 g(seed);
  std::normal_distribution<double> d(median_us, sd_us);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = d(g);
  return v;
}
}  // namespace

TEST_CASE("latency series: percentiles, and a stall every 16 steps found at its period and phase") {
  std::vector<double> v = noisy(512, 100.0, 2.0, 7);
  for (std::size_t i = 5; i < v.size(); i += 16) v[i] += 40.0;
  const LatencySeriesSummary s = summarize_latency_series(v);
  CHECK(s.n == 512);
  CHECK(s.p50_us == doctest::Approx(100.0).epsilon(0.02));
  CHECK(s.max_us > 135.0);
  REQUIRE(s.stall);
  CHECK(s.stall->period == 16);  // not 32 or 48, where it folds as cleanly
  CHECK(s.stall->phase == 5);
  CHECK(s.stall->occurrences == 32);
  CHECK(s.stall->excess_us == doctest::Approx(40.0).epsilon(0.1));
}

TEST_CASE("latency series: noise alone, or one-off spikes, is no periodic stall") {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    std::vector<double> v = noisy(512, 100.0, 3.0, seed);
    v[100] += 500.0;  // a single stall is in max, not periodic
    const LatencySeriesSummary s = summarize_latency_series(v);
    CHECK_MESSAGE(!s.stall, "seed " << seed << ": period " << (s.stall ? s.stall->period : 0));
    CHECK(s.max_us > 590.0);
  }
  CHECK_THROWS_AS(summarize_latency_series(std::vector<double>{1.0}), std::invalid_argument);
}

TEST_CASE("host events: a block's mid-step copies and syncs go to its stage, the step's own to embed and sample") {
  using K = TapeHostEvent::Kind;
  // Two moe layers routed on the host: each a D2H of the logits, a sync, an H2D of the choice.
  const std::vector<TapeHostEvent> tape{{"moe_router", K::d2h}, {"moe_router", K::sync}, {"moe_router", K::h2d},
                                        {"moe_router", K::d2h}, {"moe_router", K::sync}, {"moe_router", K::h2d}};
  auto c = charge_host_events(3, 3, 3, tape);
  CHECK(c["moe_router"].copies_d2h == 2);
  CHECK(c["moe_router"].copies_h2d == 2);
  CHECK(c["moe_router"].host_syncs == 2);
  CHECK(c["embed"].copies_h2d == 1);
  CHECK(c["sample"].copies_d2h == 1);
  CHECK(c["sample"].host_syncs == 1);
  // A trace that does not hold the tape's events plus the step's own: all to the step's stages.
  c = charge_host_events(1, 1, 1, tape);
  CHECK(c.count("moe_router") == 0);
  CHECK(c["embed"].copies_h2d == 1);
  CHECK(c["sample"].host_syncs == 1);
  c = charge_host_events(1, 2, 1, {});  // logits wanted: two D2H copies, both the step's
  CHECK(c["sample"].copies_d2h == 2);
}

TEST_CASE("decode-anatomy suite: the latency series of each mode finds a planted periodic stall") {
  atlas::test::FakeTarget target;
  target.timing.stall_every = 10;
  target.timing.stall_ns = 100'000;  // 250 us gaps, every 10th 350 us
  SuiteOptions o;
  o.warmup = 0;
  o.repetitions = 1;
  o.config = {{"prompt_tokens", 8}, {"decode_tokens", 5}, {"series_tokens", 200}};
  const auto r = run_decode_anatomy_suite(target, o);
  CHECK(r.metrics.at("itl_p50_us").samples == std::vector<double>{250.0});
  CHECK(r.metrics.at("itl_max_us").samples == std::vector<double>{350.0});
  CHECK(r.metrics.at("periodic_stall_us").samples == std::vector<double>{100.0});
  const auto& ls = r.details["latency_series"]["default"];
  CHECK(ls["n"] == 199);
  CHECK(ls["periodic_stall"]["period"] == 10);
  // gap i joins tokens i and i + 1; the fake stalls after every 10th token (i = 9, 19, ...)
  CHECK(ls["periodic_stall"]["phase"] == 9);
  CHECK(ls["periodic_stall"]["occurrences"] == 19);  // 9, 19, ..., 189 of 199 gaps
  CHECK(ls["itl_us"].size() == 199);

  target.timing.stall_every = 0;
  const auto flat = run_decode_anatomy_suite(target, o);
  CHECK(flat.metrics.at("periodic_stall_us").samples == std::vector<double>{0.0});
  CHECK(flat.details["latency_series"]["default"]["periodic_stall"].is_null());
}

TEST_CASE("decode-anatomy suite: the series is clamped to the context, and a depth it cannot hold is skipped") {
  atlas::test::FakeTarget target;
  target.context = 128;
  SuiteOptions o;
  o.warmup = 0;
  o.repetitions = 2;
  o.config = {{"prompt_tokens", 8}, {"decode_tokens", 5}, {"series_tokens", 512}, {"depths", {64, 4096}}};
  const auto r = run_decode_anatomy_suite(target, o);
  CHECK(r.details["latency_series"]["default"]["n"] == 128 - 8 - 1 - 1);
  CHECK(r.metrics.at("depth=64/decode_tok_s").samples.size() == 2);
  // the decode request reuses the 64-token prefill: 1 ms + one token + 4 gaps, over 5 tokens
  CHECK(r.metrics.at("depth=64/decode_tok_s").samples[0] == doctest::Approx(1e6 / ((1'000'000 + 10'000 + 4 * 250'000) / 1e3 / 5)));
  CHECK(r.metrics.at("depth=64/output_fingerprint").kind == atlas::records::MetricKind::counted);
  CHECK(r.metrics.at("depth=64/modes_agree").samples == std::vector<double>{1.0});
  CHECK(r.metrics.count("depth=4096/decode_tok_s") == 0);
  const std::string notes = r.details["notes"].dump();
  CHECK(notes.find("depth 4096 skipped") != std::string::npos);
  CHECK(notes.find("latency series of 119 tokens, not 512") != std::string::npos);

  o.config["series_tokens"] = 1;
  CHECK_THROWS_AS(run_decode_anatomy_suite(target, o), SuiteError);
  o.config["series_tokens"] = 0;
  o.config.erase("depths");
  const auto off = run_decode_anatomy_suite(target, o);
  CHECK(off.metrics.count("itl_p50_us") == 0);
  // Off, the config reads as it did before the series existed: BASELINEs keep their identity.
  CHECK(off.config == nlohmann::json{{"prompt_tokens", 8}, {"decode_tokens", 5}, {"warmup", 0}, {"repetitions", 2},
                                     {"seed", o.seed}});
}

namespace {
/// Graph, eager and eager with host routing, as the CUDA source offers them for a moe model;
/// `vetoed` makes the graph mode refuse capture (its steps then all run eagerly).
struct ThreeModes : atlas::test::FakeTarget, AnatomyProvider {
  std::string mode = "graph";
  bool vetoed = false;
  double bytes = 0, bandwidth = 0, weights = 0, cache = 0;
  std::unique_ptr<AnatomySource> make_anatomy_source() override {
    struct Source : AnatomySource {
      ThreeModes* t;
      double replayed = 0, eager = 0;
      explicit Source(ThreeModes* target) : t(target) {}
      std::string name() const override { return "fake"; }
      std::string time_basis() const override { return "fake"; }
      void begin() override {}
      AnatomyWindow end() override { return {}; }
      std::vector<std::string> modes() const override { return {"graph", "eager", "eager-host-routing"}; }
      void set_mode(std::string_view m) override { t->mode = std::string(m); }
      std::vector<std::string> graph_vetoes() const override {
        if (t->mode == "eager-host-routing" || t->vetoed) return {"blk.1.moe: moe routing on the host", "blk.3.moe: same"};
        return {};
      }
      std::optional<GraphAccounting> take_graph_accounting() override {
        GraphAccounting g;
        (t->mode == "graph" && !t->vetoed ? g.replayed_steps : g.eager_steps) = 10;
        return g;
      }
      std::optional<RooflineModel> roofline(int) override {
        if (t->bytes == 0) return std::nullopt;
        return RooflineModel{t->bytes, t->bandwidth, t->weights, t->cache};
      }
    };
    return std::make_unique<Source>(this);
  }
};

SuiteOptions three_mode_options() {
  SuiteOptions o;
  o.warmup = 0;
  o.repetitions = 1;
  o.config = {{"prompt_tokens", 8}, {"decode_tokens", 5}, {"series_tokens", 0}};
  return o;
}
}  // namespace

TEST_CASE("decode-anatomy suite: a graph column a veto keeps from replaying says 'no effect: vetoed by'") {
  ThreeModes target;
  target.vetoed = true;
  auto r = run_decode_anatomy_suite(target, three_mode_options());
  const auto& extra = r.details["extra_tables"];
  const Table side = table_from_json(extra[extra.size() - 1]);
  CHECK(side.header == std::vector<std::string>{"per token", "graph (no effect: vetoed by blk.1.moe, blk.3.moe)", "eager",
                                                "eager-host-routing"});
  CHECK(r.details["graph_vetoes"]["graph"].size() == 2);
  CHECK(r.metrics.count("eager-host-routing/us_per_token") == 1);
  CHECK(r.metrics.at("graph_replay_fraction").samples == std::vector<double>{0.0});

  target.vetoed = false;  // the graph replays: its column is plain
  r = run_decode_anatomy_suite(target, three_mode_options());
  const Table side2 = table_from_json(r.details["extra_tables"][r.details["extra_tables"].size() - 1]);
  CHECK(side2.header[1] == "graph");
  CHECK(r.details["graph_vetoes"].contains("eager-host-routing"));
  CHECK_FALSE(r.details["graph_vetoes"].contains("graph"));
}

TEST_CASE("decode-anatomy suite: the roofline in the record, and a step faster than DRAM allows is an error") {
  ThreeModes target;
  target.bytes = 1e6;      // 1 MB per token
  target.bandwidth = 1e10;  // 10 GB/s
  target.weights = 1e9;
  target.cache = 1e7;
  // graph mode: (1 ms + 10 us + 4 x 250 us) / 5 = 402 us per token -> 1 MB / 402 us = 2.5 GB/s
  const auto r = run_decode_anatomy_suite(target, three_mode_options());
  CHECK(r.metrics.at("bytes_per_token").samples == std::vector<double>{1e6});
  CHECK(r.metrics.at("bytes_per_token").kind == atlas::records::MetricKind::counted);
  const double us = (1'000'000 + 10'000 + 4 * 250'000) / 1e3 / 5;
  CHECK(r.metrics.at("roofline_fraction").samples[0] == doctest::Approx(1e6 / (us * 1e-6) / 1e10));
  CHECK(r.details["roofline"]["kv_len"] == 8 + 1 + 2);

  target.bandwidth = 1e9;  // 2.5 GB/s achieved over 1 GB/s measured, weights 100x the cache
  CHECK_THROWS_WITH_AS(run_decode_anatomy_suite(target, three_mode_options()),
                       doctest::Contains("faster than DRAM allows"), SuiteError);
  target.weights = 1e7;  // weights that fit the cache: a figure, not an error
  CHECK(run_decode_anatomy_suite(target, three_mode_options()).details["roofline"]["fraction"].get<double>() > 1.0);
}
