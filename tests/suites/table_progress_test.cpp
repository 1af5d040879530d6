#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "suites/progress.hpp"
#include "suites/report.hpp"
#include "suites/table.hpp"

using namespace atlas::suites;

TEST_CASE("text and markdown printers") {
  Table t;
  t.header = {"stage", "µs/token"};
  t.rows = {{"attention", "10.00"}, {"a|b", "n/a"}};
  std::ostringstream text, md;
  TextTablePrinter().print(t, text);
  CHECK(text.str() == "stage      µs/token\n-------------------\nattention     10.00\na|b             n/a\n");
  MarkdownTablePrinter().print(t, md);
  CHECK(md.str() == "| stage | µs/token |\n| --- | ---: |\n| attention | 10.00 |\n| a\\|b | n/a |\n");
  CHECK_THROWS(make_table_printer("html"));
}

TEST_CASE("markdown table: names and notes cannot link, mention or embed HTML (the project's one escaper)") {
  Table t;
  t.title = "load";
  t.header = {"metric", "p50"};
  t.rows = {{"[x](https://evil.example)/@org/team", "1"}};
  t.notes = {"rate=200: p99 send lag 12 ms > 10 ms <img src=x>"};
  std::ostringstream md;
  MarkdownTablePrinter().print(t, md);
  CHECK(md.str() ==
        "**load**\n\n| metric | p50 |\n| --- | ---: |\n| &#91;x&#93;(https&#58;//evil.example)/&#64;org/team | 1 |\n\n"
        "rate=200: p99 send lag 12 ms &gt; 10 ms &lt;img src=x&gt;\n");
}

TEST_CASE("metrics table: a hash reads 'equal' and in hex, a count as-is") {
  atlas::records::SuiteResult r;
  r.name = "decode-anatomy";
  atlas::records::Metric fp;
  fp.unit = "fnv1a32";
  fp.kind = atlas::records::MetricKind::counted;
  fp.samples = {850623738, 850623738};
  r.metrics["output_fingerprint"] = fp;
  atlas::records::Metric n = fp;
  n.unit = "count";
  n.samples = {143, 143};
  r.metrics["launches_per_token"] = n;
  const Table t = metrics_table(r);
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0] == std::vector<std::string>{"launches_per_token", "count", "lower", "counted", "2", "143", "143", "143",
                                              "143", "143"});
  CHECK(t.rows[1] == std::vector<std::string>{"output_fingerprint", "fnv1a32", "equal", "counted", "2", "0x32b37cfa",
                                              "0x32b37cfa", "0x32b37cfa", "0x32b37cfa", "0x32b37cfa"});
  // Runs that disagree: no percentile of a hash, the extremes as they occurred.
  r.metrics["output_fingerprint"].samples = {850623738, 12345};
  CHECK(metrics_table(r).rows[1] == std::vector<std::string>{"output_fingerprint", "fnv1a32", "equal", "counted", "2",
                                                             "mixed", "mixed", "mixed", "0x00003039", "0x32b37cfa"});
}

TEST_CASE("metrics table: a load sweep's levels read by value (rate=20, 80, 200), not as text") {
  // The record keeps metrics in a name-ordered map, whose text order put rate=200 before rate=80.
  atlas::records::SuiteResult r;
  r.name = "load";
  atlas::records::Metric m;
  m.unit = "ms";
  m.kind = atlas::records::MetricKind::timed;
  m.samples = {1};
  for (const char* level : {"rate=20", "rate=200", "rate=80", "rate=0.5", "concurrency=16", "concurrency=4"})
    r.metrics[std::string(level) + "/ttft_ms"] = m;
  const Table t = metrics_table(r);
  std::vector<std::string> names;
  for (const auto& row : t.rows) names.push_back(row[0]);
  CHECK(names == std::vector<std::string>{"concurrency=4/ttft_ms", "concurrency=16/ttft_ms", "rate=0.5/ttft_ms",
                                          "rate=20/ttft_ms", "rate=80/ttft_ms", "rate=200/ttft_ms"});
}

TEST_CASE("line progress prints one plain line per step") {
  std::ostringstream os;
  LineProgress p(os);
  p.begin("ttft", 2);
  p.step("cold len=16");
  p.step("warm len=16");
  p.end("ok");
  CHECK(os.str() == "[ttft] start (2 steps)\n[ttft 1/2] cold len=16\n[ttft 2/2] warm len=16\n[ttft] done: ok\n");
}

TEST_CASE("bar progress redraws one line") {
  std::ostringstream os;
  BarProgress p(os);
  p.begin("x", 4);
  p.step("a");
  CHECK(os.str() == "\r\x1b[2Kx [######..................] 1/4 a");
}
