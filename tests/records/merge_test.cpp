#include <doctest/doctest.h>

#include <vector>

#include "records/error.hpp"
#include "records/merge.hpp"
#include "records/record_io.hpp"
#include "tests/records/fixture.hpp"

using atlas::records::Record;
using atlas::records::RecordError;

namespace {
std::vector<Record> two_shards() {
  Record a = atlas::test::sample_record();
  a.run_id = "shard-a";
  a.gate_or_suite = "nightly";
  Record b = atlas::test::sample_record();
  b.run_id = "shard-b";
  b.gate_or_suite = "nightly";
  b.start_utc = "2026-11-29T14:00:00Z";
  b.end_utc = "2026-11-29T15:00:00Z";
  b.suites.clear();
  atlas::records::SuiteResult bfcl;
  bfcl.name = "bfcl";
  bfcl.metrics["accuracy"] = atlas::test::counted_metric({0.5});
  b.suites["bfcl"] = bfcl;
  b.suites["ttft"] = a.suites["ttft"];
  b.suites["ttft"].metrics["ttft_ms"].samples = {11.0, 11.5};
  b.suites["ttft"].details = {{"shard_b_only", true}};
  return {a, b};
}
}  // namespace

TEST_CASE("merge concatenates samples of matching metrics and unions suites") {
  const auto shards = two_shards();
  const Record m = atlas::records::merge_records(shards);
  CHECK(m.gate_or_suite == "nightly");
  CHECK(m.start_utc == "2026-11-29T14:00:00Z");
  CHECK(m.end_utc == "2026-11-29T15:00:00Z");
  CHECK(m.merged_from == std::vector<std::string>{"shard-a", "shard-b"});
  CHECK(m.run_id.rfind("merged-", 0) == 0);
  CHECK(m.run_id.size() == 7 + 12);
  CHECK(atlas::records::merge_records(shards).run_id == m.run_id);
  REQUIRE(m.suites.size() == 2);
  CHECK(m.suites.at("ttft").metrics.at("ttft_ms").samples ==
        std::vector<double>{10.5, 10.1, 10.9, 10.3, 10.7, 11.0, 11.5});
  CHECK(m.suites.at("ttft").metrics.at("launches_per_token").samples == std::vector<double>{42, 42, 42, 42, 42, 42});
  CHECK(m.suites.at("ttft").details["shard_b_only"] == true);
  CHECK(m.suites.at("ttft").details["per_request"].size() == 3);
  CHECK(m.suites.at("bfcl").metrics.at("accuracy").samples == std::vector<double>{0.5});
  CHECK(m.verdicts.is_null());
  CHECK(m.valid);
  // merged_from survives the JSON round trip.
  CHECK(atlas::records::record_from_json(atlas::records::to_json(m), "m").merged_from == m.merged_from);
}

TEST_CASE("merge refuses shards that do not belong together") {
  auto shards = two_shards();
  shards[1].git.commit = "ffff000000000000000000000000000000000000";
  CHECK_THROWS_WITH_AS(atlas::records::merge_records(shards), doctest::Contains("shard 1 disagrees with shard 0 on /git/commit"),
                       RecordError);
  shards = two_shards();
  shards[1].suites["ttft"].config["prompt_tokens"] = 256;
  CHECK_THROWS_WITH_AS(atlas::records::merge_records(shards), doctest::Contains("/suites/ttft/config"), RecordError);
  shards = two_shards();
  shards[1].suites["ttft"].metrics["ttft_ms"].unit = "us";
  CHECK_THROWS_WITH_AS(atlas::records::merge_records(shards), doctest::Contains("/suites/ttft/metrics/ttft_ms/unit: \"us\" vs \"ms\""),
                       RecordError);
  shards = two_shards();
  shards[1].machine.machine_class = "h200";
  CHECK_THROWS_AS(atlas::records::merge_records(shards), RecordError);
  shards = two_shards();
  shards[1].config["threads"] = 8;
  CHECK_THROWS_WITH_AS(atlas::records::merge_records(shards), doctest::Contains("/config/threads"), RecordError);
  CHECK_THROWS_AS(atlas::records::merge_records({}), RecordError);
}

TEST_CASE("merge: differing gate names become \"merged\"; an invalid shard invalidates the result") {
  auto shards = two_shards();
  shards[1].gate_or_suite = "bfcl";
  shards[1].valid = false;
  shards[1].invalid_reason = "GPU throttled";
  const Record m = atlas::records::merge_records(shards);
  CHECK(m.gate_or_suite == "merged");
  CHECK_FALSE(m.valid);
  CHECK(m.invalid_reason == "GPU throttled");
}

TEST_CASE("merge refuses the same shard twice and two runs of one shard") {
  auto shards = two_shards();
  std::vector<Record> twice = {shards[0], shards[0]};
  CHECK_THROWS_WITH_AS(atlas::records::merge_records(twice),
                       doctest::Contains("shard 1 is the same run as shard 0 (run_id shard-a)"), RecordError);
  shards[0].verdicts = {{"shard", {{"index", 0}, {"count", 2}}}};
  shards[1].verdicts = {{"shard", {{"index", 0}, {"count", 2}}}};  // a rerun of shard 0, not shard 1
  CHECK_THROWS_WITH_AS(atlas::records::merge_records(shards),
                       doctest::Contains("are two runs of nightly shard 0/2"), RecordError);
  shards[1].verdicts["shard"]["index"] = 1;
  CHECK(atlas::records::merge_records(shards).merged_from == std::vector<std::string>{"shard-a", "shard-b"});
}
