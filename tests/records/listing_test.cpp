// `records list` as a library (records/listing.hpp, records/printers/listing_printer.hpp): the
// filters, each record's kind read from its file (or why it does not read), and the printers.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "records/error.hpp"
#include "records/listing.hpp"
#include "records/printers/listing_printer.hpp"
#include "records/store.hpp"
#include "tests/records/fixture.hpp"
#include "tests/test_data.hpp"

using namespace atlas;
namespace fs = std::filesystem;

namespace {

std::string print(const std::vector<records::ListedRecord>& rows, const char* format) {
  std::ostringstream out;
  records::make_listing_printer(format)->print(rows, out);
  return out.str();
}

/// One text row as `records list` has always printed it (printf's %-Ns columns).
std::string printf_row(const std::string& utc, const std::string& cls, const std::string& commit, const std::string& kind,
                       const std::string& target, const std::string& hooks, const std::string& path) {
  char buf[1024];
  std::snprintf(buf, sizeof buf, "%-16s  %-20s  %-18s  %-22s  %-12s  %-24s  %s\n", utc.c_str(), cls.c_str(), commit.c_str(),
                kind.c_str(), target.c_str(), hooks.c_str(), path.c_str());
  return buf;
}

}  // namespace

TEST_CASE("records listing: filters, kinds read from the files, and the text printer's columns") {
  const auto store = test::scratch_dir("records_listing");
  const std::string c1 = "aaaa000000000000000000000000000000000000", c2 = "bbbb000000000000000000000000000000000000";
  auto base = test::sample_record(c1, "2026-11-29T10:00:00Z");
  base.config["target_name"] = "engine:cpu";
  const auto p1 = records::write_to_store(base, store);
  auto hooked = test::sample_record(c2, "2026-11-29T11:00:00Z");
  hooked.valid = false;
  hooked.invalid_reason = "a suite failed";
  hooked.config["target"] = {{"options", {{"backend", {{"inject_decode_delay_us", 300}}}}}};
  const auto p2 = records::write_to_store(hooked, store);

  const auto all = records::list_store(store, {});
  REQUIRE(all.size() == 2);
  CHECK(all[0].stored.path == p1);
  REQUIRE(all[0].kind.has_value());
  CHECK(all[0].kind_text() == "pr");
  CHECK(all[0].hooks_text() == "-");
  CHECK(all[1].kind_text() == "pr INVALID");
  CHECK(all[1].hooks_text() == "inject_decode_delay_us=300");

  CHECK(records::list_store(store, {"", "bbbb", ""}).size() == 1);
  CHECK(records::list_store(store, {"other-class", "", ""}).empty());
  CHECK(records::list_store(store, {"", "", "nightly"}).empty());

  CHECK(print(all, "text") ==
        printf_row("utc", "machine_class", "commit", "kind", "target", "test_hooks", "path") +
            printf_row("20261129T100000Z", "cpu-2c-x86_64", "aaaa00000000", "pr", "engine:cpu", "-", p1.string()) +
            printf_row("20261129T110000Z", "cpu-2c-x86_64", "bbbb00000000", "pr INVALID", "", "inject_decode_delay_us=300",
                       p2.string()));
  CHECK(print({}, "text").empty());
  CHECK(print({}, "json") == "[]\n");
  CHECK_THROWS_AS(records::make_listing_printer("csv"), records::RecordError);
}

TEST_CASE("records listing: a record that does not read is listed as unreadable with its reason") {
  const auto store = test::scratch_dir("records_listing_bad");
  const auto good = records::write_to_store(test::sample_record(), store);
  const fs::path bad = good.parent_path() / "pr-20261129T150000Z.json";
  std::ofstream(bad) << R"({"schema_version": "nope"})";
  const auto rows = records::list_store(store, {});
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].error.empty());
  CHECK_FALSE(rows[1].kind.has_value());
  CHECK(rows[1].kind_text() == "unreadable");
  CHECK(rows[1].error.find(bad.string()) != std::string::npos);
  const auto j = nlohmann::json::parse(print(rows, "json"));
  CHECK(j[1]["kind"] == "unreadable");
  CHECK(j[1]["valid"].is_null());
  CHECK(j[1]["error"] == rows[1].error);
  CHECK_FALSE(j[0].contains("error"));
}
