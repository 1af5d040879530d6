#include <doctest/doctest.h>

#include <sstream>

#include "suites/progress.hpp"
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
