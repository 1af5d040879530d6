#include <doctest/doctest.h>

#include <filesystem>
#include <limits>
#include <string>

#include "common/atomic_file.hpp"
#include "records/error.hpp"
#include "records/record_io.hpp"
#include "tests/records/fixture.hpp"
#include "tests/test_data.hpp"

using atlas::records::Record;
using atlas::records::RecordError;
using nlohmann::json;

namespace {
json written() { return atlas::records::to_json(atlas::test::sample_record()); }

// Parses `j` and returns the error message (empty when it parsed).
std::string error_of(const json& j) {
  try {
    atlas::records::record_from_json(j, "r.json");
  } catch (const RecordError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("record round trip keeps every field") {
  const Record a = atlas::test::sample_record();
  const json j = atlas::records::to_json(a);
  const Record b = atlas::records::record_from_json(j, "mem");
  CHECK(b.schema_version == 1);
  CHECK(b.run_id == a.run_id);
  CHECK(b.start_utc == a.start_utc);
  CHECK(b.end_utc == a.end_utc);
  CHECK(b.gate_or_suite == "pr");
  CHECK(b.git.commit == a.git.commit);
  CHECK(b.git.branch == "records");
  CHECK(b.build.compiler == "GNU 12.2.0");
  CHECK(b.machine.cores == 2);
  CHECK(b.machine.memory_bytes == (8LL << 30));
  CHECK(b.machine.machine_class == "cpu-2c-x86_64");
  CHECK(b.model.parameter_count == 260032);
  CHECK(b.data_assets == a.data_assets);
  CHECK(b.config == a.config);
  CHECK(b.endpoint.is_null());
  REQUIRE(b.suites.count("ttft") == 1);
  const auto& s = b.suites.at("ttft");
  CHECK(s.name == "ttft");
  CHECK(s.config == a.suites.at("ttft").config);
  CHECK(s.details == a.suites.at("ttft").details);
  CHECK(s.metrics.at("ttft_ms").samples == a.suites.at("ttft").metrics.at("ttft_ms").samples);
  CHECK(s.metrics.at("launches_per_token").kind == atlas::records::MetricKind::counted);
  CHECK(b.valid);
  // Writing the parsed record again gives the same JSON (the text is the stable form).
  CHECK(atlas::records::to_json(b) == j);
}

TEST_CASE("a GPU run's machine block and the command line survive the round trip") {
  Record a = atlas::test::sample_record();
  a.machine.gpu_name = "NVIDIA H200";
  a.machine.gpu_count = 1;
  a.machine.gpu_driver = "580.95.05";
  a.machine.gpu_clocks = {{"sm_mhz", 1980}, {"sm_max_mhz", 1980}};
  a.machine.machine_class = "h200";
  a.command_line = {"atlas-bench", "--data-dir", "../shared/data", "gate", "--backend", "cuda"};
  const Record b = atlas::records::record_from_json(atlas::records::to_json(a), "mem");
  CHECK(b.machine.gpu_count == 1);
  CHECK(b.machine.gpu_clocks["sm_mhz"] == 1980);
  CHECK(b.machine.machine_class == "h200");
  CHECK(b.command_line == a.command_line);
  json j = atlas::records::to_json(a);
  j["machine"]["gpu_count"] = -2;
  CHECK_THROWS_WITH_AS(atlas::records::record_from_json(j, "r.json"), doctest::Contains("/machine/gpu_count"),
                       atlas::records::RecordError);
}

TEST_CASE("summaries are computed from samples on write") {
  const json j = written();
  const json& sum = j["suites"]["ttft"]["metrics"]["ttft_ms"]["summary"];
  CHECK(sum["n"] == 5);
  CHECK(sum["min"].get<double>() == 10.1);
  CHECK(sum["max"].get<double>() == 10.9);
  CHECK(sum["p50"].get<double>() == 10.5);
  CHECK(sum["mean"].get<double>() == doctest::Approx(10.5));
  // A stale summary in the file is ignored: the samples are the truth.
  json k = j;
  k["suites"]["ttft"]["metrics"]["ttft_ms"]["summary"]["p50"] = 999.0;
  const auto r = atlas::records::record_from_json(k, "k.json");
  CHECK(atlas::records::to_json(r)["suites"]["ttft"]["metrics"]["ttft_ms"]["summary"]["p50"].get<double>() == 10.5);
  // Empty samples -> n = 0 and null statistics.
  Record e = atlas::test::sample_record();
  e.suites["ttft"].metrics["ttft_ms"].samples.clear();
  const json ej = atlas::records::to_json(e)["suites"]["ttft"]["metrics"]["ttft_ms"]["summary"];
  CHECK(ej["n"] == 0);
  CHECK(ej["p50"].is_null());
}

TEST_CASE("malformed records name the file, the JSON path and the bad value") {
  json j = written();
  j["machine"]["cores"] = "two";
  CHECK(error_of(j) == "r.json: /machine/cores: expected an integer, got \"two\"");

  j = written();
  j["suites"]["ttft"]["metrics"]["ttft_ms"]["better"] = "faster";
  CHECK(error_of(j) == "r.json: /suites/ttft/metrics/ttft_ms/better: expected \"lower\" or \"higher\", got \"faster\"");

  j = written();
  j["suites"]["ttft"]["metrics"]["ttft_ms"]["samples"][2] = "x";
  CHECK(error_of(j) == "r.json: /suites/ttft/metrics/ttft_ms/samples/2: expected a finite number, got \"x\"");

  j = written();
  j["suites"]["ttft"]["metrics"]["ttft_ms"]["kind"] = 3;
  CHECK(error_of(j) == "r.json: /suites/ttft/metrics/ttft_ms/kind: expected a string, got 3");

  j = written();
  j.erase("git");
  CHECK(error_of(j) == "r.json: /git: required field is missing");

  j = written();
  j["suites"]["a/b"] = j["suites"]["ttft"];
  j["suites"]["a/b"]["metrics"]["ttft_ms"].erase("unit");
  CHECK(error_of(j) == "r.json: /suites/a~1b/metrics/ttft_ms/unit: required field is missing");

  j = written();
  j["valid"] = false;
  CHECK(error_of(j).find("/invalid_reason") != std::string::npos);

  CHECK(error_of(json::array()) == "r.json: /: expected a record object, got []");
}

TEST_CASE("unknown schema_version is a clear error; unknown keys are ignored") {
  json j = written();
  j["schema_version"] = 2;
  const std::string e = error_of(j);
  CHECK(e.find("r.json: /schema_version: unsupported schema_version 2") == 0);
  CHECK(e.find("reads version 1") != std::string::npos);
  j = written();
  j["future_field"] = {{"x", 1}};
  CHECK(error_of(j).empty());
}

TEST_CASE("read_record reports unreadable and malformed files as RecordError") {
  const auto dir = atlas::test::scratch_dir("record_io_read");
  CHECK_THROWS_AS(atlas::records::read_record(dir / "missing.json"), RecordError);
  atlas::write_file_atomic(dir / "bad.json", "{\"schema_version\": 1,");
  CHECK_THROWS_WITH_AS(atlas::records::read_record(dir / "bad.json"), doctest::Contains("bad.json: malformed JSON"),
                       RecordError);
  atlas::write_file_atomic(dir / "ok.json", atlas::records::record_text(atlas::test::sample_record()));
  CHECK(atlas::records::read_record(dir / "ok.json").run_id == "20261129T143320Z-0123456789ab");
}

TEST_CASE("record_text refuses records that would not read back, naming the field") {
  Record r = atlas::test::sample_record();
  r.suites["ttft"].metrics["ttft_ms"].samples.push_back(std::numeric_limits<double>::infinity());
  CHECK_THROWS_WITH_AS(atlas::records::record_text(r),
                       doctest::Contains("/suites/ttft/metrics/ttft_ms/samples/5: expected a finite number, got null"),
                       RecordError);
  r = atlas::test::sample_record();
  r.suites["ttft"].metrics["ttft_ms"].samples.push_back(std::numeric_limits<double>::quiet_NaN());
  CHECK_THROWS_WITH_AS(atlas::records::record_text(r), doctest::Contains("/suites/ttft/metrics/ttft_ms: "), RecordError);
  r = atlas::test::sample_record();
  r.valid = false;
  CHECK_THROWS_WITH_AS(atlas::records::record_text(r), doctest::Contains("/invalid_reason"), RecordError);
  r.invalid_reason = "GPU throttled";
  CHECK(atlas::records::record_text(r).find("\"invalid_reason\": \"GPU throttled\"") != std::string::npos);
}

TEST_CASE("hostile records: nesting refused before parsing, negative or absurd counts refused by name") {
  // A record nested 10^6 deep crashed `records list`, `diff`, `merge` and `ratchet` (the
  // printers and comparisons recurse once per level).
  const auto dir = atlas::test::scratch_dir("record_io_hostile");
  std::string deep = "{\"schema_version\": 1, \"config\": ";
  deep += std::string(1000000, '[') + std::string(1000000, ']') + "}";
  atlas::write_file_atomic(dir / "deep.json", deep);
  CHECK_THROWS_WITH_AS(atlas::records::read_record(dir / "deep.json"),
                       doctest::Contains("deep.json: nested deeper than 256 levels (refused before parsing)"), RecordError);
  // `ratchet` took prefilled_tokens -1000 from a record as an improvement.
  json j = written();
  j["suites"]["ttft"]["metrics"]["launches_per_token"]["samples"][1] = -1000;
  CHECK(error_of(j) ==
        "r.json: /suites/ttft/metrics/launches_per_token/samples/1: expected a count (>= 0 and < 2^64), got -1000");
  j = written();
  j["suites"]["ttft"]["metrics"]["launches_per_token"]["samples"][0] = 1e300;
  CHECK(error_of(j).find("/samples/0: expected a count (>= 0 and < 2^64)") != std::string::npos);
  j = written();
  j["suites"]["ttft"]["metrics"]["ttft_ms"]["samples"][0] = -1;  // a timed sample is not a count: shape only
  CHECK(error_of(j).empty());
}
