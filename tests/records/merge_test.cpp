#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/json_file.hpp"
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

namespace {

// A hostile suite detail: `width` keys, each an array nested `depth` levels around a 0.
nlohmann::json nested_details(int depth, int width, const std::string& prefix) {
  nlohmann::json details = nlohmann::json::object();
  const std::string chain = std::string(static_cast<std::size_t>(depth), '[') + "0" + std::string(static_cast<std::size_t>(depth), ']');
  for (int i = 0; i < width; ++i) details[prefix + std::to_string(i)] = nlohmann::json::parse(chain);
  return details;
}

struct Sizes {
  std::size_t in = 0, out = 0;
};

// `records merge` as the CLI does it: shard texts read under the nesting limit, merged, written.
Sizes merge_sizes(int depth, int width) {
  auto shards = two_shards();
  if (width > 0) {
    shards[0].suites["ttft"].details = nested_details(depth, width, "a");
    shards[1].suites["ttft"].details = nested_details(depth, width, "b");
  }
  Sizes s;
  std::vector<Record> read;
  for (const auto& shard : shards) {
    const std::string text = atlas::records::to_json(shard).dump();  // what a hostile author writes: compact
    s.in += text.size();
    read.push_back(atlas::records::record_from_json(atlas::parse_json_text(text, "shard"), "shard"));
  }
  s.out = atlas::records::record_text(atlas::records::merge_records(read)).size();
  return s;
}

}  // namespace

TEST_CASE("merge: output bytes grow linearly with the input, however deep or repetitive the record") {
  // Full indentation wrote 2 spaces per level on every line, so a chain d deep came out O(d^2):
  // 143 KB in, 200 MB out. Measured as bytes beyond the payload-free shards, on inputs doubled in
  // depth (up to the 256-level read limit) and in width.
  const Sizes empty = merge_sizes(0, 0);
  auto check_family = [&](const std::vector<std::pair<int, int>>& steps, const char* what) {
    std::optional<Sizes> last;
    for (const auto& [depth, width] : steps) {
      const Sizes s = merge_sizes(depth, width);
      const double in = static_cast<double>(s.in - empty.in), out = static_cast<double>(s.out - empty.out);
      INFO(what, ": depth ", depth, ", width ", width, ": ", in, " bytes in, ", out, " bytes out");
      CHECK(out <= 8 * in);  // a constant factor, whatever the depth
      if (last) {
        const double last_in = static_cast<double>(last->in - empty.in), last_out = static_cast<double>(last->out - empty.out);
        CHECK(in / last_in == doctest::Approx(2.0).epsilon(0.1));  // the input doubled ...
        CHECK(out <= 2.1 * last_out);                              // ... and the output at most did
      }
      last = s;
    }
  };
  check_family({{31, 32}, {62, 32}, {124, 32}, {248, 32}}, "depth doubling");
  check_family({{248, 16}, {248, 32}, {248, 64}, {248, 128}}, "width doubling");
}
