#include <doctest/doctest.h>

#include <chrono>

#include "gates/quiet_box.hpp"

#include <string>

#include "common/atomic_file.hpp"
#include "gates/baseline.hpp"
#include "gates/config.hpp"
#include "gates/error.hpp"
#include "tests/gates/gate_fixtures.hpp"
#include "tests/test_data.hpp"

using namespace atlas;
using namespace atlas::gates;

namespace {

nlohmann::json valid_baseline_json() {
  return nlohmann::json::parse(R"({
    "schema_version": 1, "gate": "pr", "machine_class": "cpu-test", "frozen": false,
    "metrics": {
      "ttft/ttft_p50_ms": {"value": 12.5, "unit": "ms", "better": "lower", "kind": "timed",
                           "tolerance": {"relative": 0.05, "absolute": 0.1}, "frozen": false,
                           "samples": [12, 12.5, 13],
                           "history": [{"commit": "abc", "date": "2026-11-29T15:00:00Z", "old": null,
                                        "new": 12.5, "reason": "init", "action": "init"}]}
    },
    "history": []
  })");
}

std::string error_of(const nlohmann::json& j) {
  try {
    parse_baseline(j, "baselines/cpu-test/pr.BASELINE.json");
  } catch (const GateError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a valid BASELINE parses and round-trips through JSON") {
  const auto b = parse_baseline(valid_baseline_json(), "x");
  const auto& m = b.metrics.at("ttft/ttft_p50_ms");
  CHECK(m.value == 12.5);
  CHECK(m.tolerance.absolute == 0.1);
  CHECK(m.samples.size() == 3);
  CHECK(!m.history.at(0).old_value);
  CHECK(to_json(parse_baseline(to_json(b), "y")) == to_json(b));
}

TEST_CASE("corrupted BASELINE fields give GateError naming file, field path and value") {
  auto j = valid_baseline_json();
  j["metrics"]["ttft/ttft_p50_ms"]["tolerance"]["relative"] = "five";
  const auto e1 = error_of(j);
  CHECK(e1.find("baselines/cpu-test/pr.BASELINE.json") != std::string::npos);
  CHECK(e1.find("metrics[\"ttft/ttft_p50_ms\"].tolerance.relative") != std::string::npos);
  CHECK(e1.find("\"five\"") != std::string::npos);

  j = valid_baseline_json();
  j["metrics"]["ttft/ttft_p50_ms"]["better"] = "faster";
  CHECK(error_of(j).find("better: expected one of lower|higher (value: \"faster\")") != std::string::npos);

  j = valid_baseline_json();
  j["metrics"]["ttft/ttft_p50_ms"]["samples"][1] = nullptr;
  CHECK(error_of(j).find("samples[1]") != std::string::npos);

  j = valid_baseline_json();
  j["metrics"]["ttft/ttft_p50_ms"]["history"][0]["action"] = "loosen";
  CHECK(error_of(j).find("history[0].action") != std::string::npos);

  j = valid_baseline_json();
  j["metrics"]["ttft/ttft_p50_ms"].erase("value");
  CHECK(error_of(j).find("metrics[\"ttft/ttft_p50_ms\"].value: missing") != std::string::npos);

  j = valid_baseline_json();
  j["metrics"]["nosuite"] = j["metrics"]["ttft/ttft_p50_ms"];
  CHECK(error_of(j).find("metrics.nosuite: metric key must be <suite>/<metric>") != std::string::npos);

  j = valid_baseline_json();
  j["schema_version"] = 2;
  CHECK(error_of(j).find("schema_version: unsupported") != std::string::npos);

  j = valid_baseline_json();
  j["metrics"]["ttft/ttft_p50_ms"]["tolerance"]["absolute"] = -1;
  CHECK(error_of(j).find("tolerance.absolute: must be >= 0") != std::string::npos);
}

TEST_CASE("a BASELINE file that is not JSON gives GateError (exit 3 class) naming the file") {
  const auto dir = test::scratch_dir("gates_baseline_io");
  const auto p = dir / "pr.BASELINE.json";
  write_file_atomic(p, "{\"schema_version\": 1, \"gate\": ");
  try {
    load_baseline(p);
    FAIL("expected GateError");
  } catch (const GateError& e) {
    CHECK(std::string(e.what()).find(p.string()) != std::string::npos);
    CHECK(std::string(e.what()).find("malformed JSON") != std::string::npos);
  }
  // GateError is an InputError: the CLI maps it to exit code 3.
  CHECK_THROWS_AS(load_baseline(dir / "absent.json"), InputError);
}

TEST_CASE("save_baseline writes atomically and load_baseline reads it back") {
  const auto dir = test::scratch_dir("gates_baseline_save");
  const auto p = baseline_path(dir, "cpu-test", "pr");
  CHECK(p == dir / "cpu-test" / "pr.BASELINE.json");
  const auto b = parse_baseline(valid_baseline_json(), "x");
  save_baseline(p, b);
  CHECK(to_json(load_baseline(p)) == to_json(b));
}

TEST_CASE("gate config: the shipped configs parse; bad fields are named") {
  const auto pr = load_gate_config(test::source_dir() / "gates/config/pr.json");
  CHECK(pr.gate == "pr");
  CHECK(pr.alpha == 0.01);
  CHECK(pr.suites.size() >= 1);
  const auto nightly = load_gate_config(test::source_dir() / "gates/config/nightly.json");
  CHECK(nightly.gate == "nightly");
  CHECK(nightly.min_samples >= pr.min_samples);

  auto j = to_json(pr);
  j["quiet_box"]["max_load_per_cor"] = 1;  // misspelt
  try {
    parse_gate_config(j, "gates/config/pr.json");
    FAIL("expected GateError");
  } catch (const GateError& e) {
    CHECK(std::string(e.what()) == "gates/config/pr.json: field quiet_box.max_load_per_cor: unknown field (value: 1)");
  }
  j = to_json(pr);
  j["alpha"] = 2;
  CHECK_THROWS_WITH_AS(parse_gate_config(j, "c.json"), "c.json: field alpha: must be in (0, 1) (value: 2.0)", GateError);
  CHECK(to_json(parse_gate_config(to_json(pr), "again")) == to_json(pr));
}

TEST_CASE("gate config: the quiet-box settle wait is read, bounded below, and zero means no wait") {
  auto j = to_json(load_gate_config(test::source_dir() / "gates/config/pr.json"));
  CHECK(parse_gate_config(j, "pr.json").quiet_box.settle_max_s == 150);  // the default
  j["quiet_box"]["settle_max_s"] = 7;
  CHECK(parse_gate_config(j, "pr.json").quiet_box.settle_max_s == 7);
  j["quiet_box"]["settle_max_s"] = -1;
  CHECK_THROWS_AS(parse_gate_config(j, "pr.json"), GateError);
  // A busy box with settle_max_s = 0 is judged at once (no 5 s poll).
  QuietBoxThresholds t;
  t.settle_max_s = 0;
  t.max_load_per_core = 1e-9;  // never quiet
  t.sample_window_ms = 10;
  const auto t0 = std::chrono::steady_clock::now();
  int waits = 0;
  const QuietBoxReport r = settle_quiet_box(t, [&](const QuietBoxReport&) { ++waits; });
  CHECK_FALSE(r.quiet);
  CHECK(waits == 0);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(4));
}
