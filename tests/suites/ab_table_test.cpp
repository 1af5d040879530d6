// The A/B table writes values as every printer does (format_number) and output fingerprints in
// hex, as docs/metrics.md says (%.4f printed 15770.4648 and a hash as a decimal float).
#include <doctest/doctest.h>

#include "suites/ab/ab.hpp"

using namespace atlas::suites;

TEST_CASE("ab table: format_number for values and ratios, hex for fingerprints") {
  AbResult res;
  res.record.gate_or_suite = "ab/decode-anatomy";
  MetricComparison tok;
  tok.metric = "decode_tok_s";
  tok.unit = "tok/s";
  tok.median_a = 15770.4648;
  tok.median_b = 17959.8;
  tok.ratio = 17959.8 / 15770.4648;
  tok.verdict = "b better";
  tok.p_value = 0.0123;
  MetricComparison fp;
  fp.metric = "output_fingerprint";
  fp.unit = "fnv1a32";
  fp.kind = atlas::records::MetricKind::counted;
  fp.median_a = 850623738.0;
  fp.median_b = 850623739.0;
  fp.ratio = 1.0;
  fp.verdict = "differs";
  res.comparisons = {tok, fp};
  const Table t = ab_table(res);
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0] == std::vector<std::string>{"decode_tok_s", "tok/s", "15770", "17960", "1.139", "-", "-", "0.0123", "b better"});
  CHECK(t.rows[1] == std::vector<std::string>{"output_fingerprint", "fnv1a32", "0x32b37cfa", "0x32b37cfb", "-", "-", "-", "exact", "differs"});
}
