// Counted metrics judged head vs merge-base on this CPU (gates/counted_vs_base.hpp), and the
// stored counts used only where the CPU fingerprint matches.
#include <doctest/doctest.h>

#include "gates/counted_vs_base.hpp"
#include "gates/error.hpp"
#include "gates/ratchet.hpp"
#include "tests/gates/gate_fixtures.hpp"

using namespace atlas;
using namespace atlas::gates;
using records::MetricKind;

namespace {

nlohmann::json counted_on(const std::string& cpu) {
  return {{"cpu_model", cpu}, {"cpu_flags_sha256", "ab12cd34ef56ab12cd34"}, {"valgrind", "valgrind-3.19.0"}};
}

records::Record instructions_record(double per_decode_token, const std::string& cpu) {
  auto r = test::record_with("instructions", "instructions_per_decode_token",
                             test::metric({per_decode_token}, MetricKind::counted, records::Better::lower, "instructions"));
  r.suites["instructions"].config = {{"prompt_tokens", 32}, {"decode_tokens", 64}, {"counted_on", counted_on(cpu)}};
  return r;
}

GateConfig config_with_instruction_tolerance() {
  GateConfig c = test::test_config();
  c.metric_tolerance["instructions/"] = Tolerance{0.005, 0.0};
  return c;
}

}  // namespace

TEST_CASE("counted vs merge-base: unchanged passes, +5% instructions is a regression, -5% improved, within 0.5% same") {
  const GateConfig cfg = config_with_instruction_tolerance();
  const auto base = instructions_record(223586.625, "AMD EPYC");
  auto verdict = [&](double head) {
    const Comparison c = compare_counted_with_base(instructions_record(head, "AMD EPYC"), base, cfg, "0123456789abcdef");
    REQUIRE(c.verdicts.size() == 1);
    CHECK(c.verdicts[0].key == "instructions/instructions_per_decode_token");
    CHECK(c.verdicts[0].why.rfind("vs merge-base 0123456789ab: ", 0) == 0);
    CHECK(c.verdicts[0].baseline_value == doctest::Approx(223586.625));
    return c.verdicts[0].status;
  };
  CHECK(verdict(223586.625) == VerdictStatus::same);
  CHECK(verdict(234843.1875) == VerdictStatus::regression);  // the planted --inject-decode-work 1000
  CHECK(verdict(212000.0) == VerdictStatus::improved);
  CHECK(verdict(223586.625 * 1.004) == VerdictStatus::same);  // inside the 0.5 % tolerance
}

TEST_CASE("counted vs merge-base: two CPUs' counts are never compared") {
  const GateConfig cfg = config_with_instruction_tolerance();
  CHECK_THROWS_WITH_AS(compare_counted_with_base(instructions_record(1.0, "AMD EPYC"), instructions_record(1.0, "Intel Xeon"), cfg, "0123456789abcdef"),
                       doctest::Contains("counts were made on Intel Xeon"), GateError);
  records::Record no_suite = instructions_record(1.0, "AMD EPYC");
  no_suite.suites.clear();
  CHECK_THROWS_WITH_AS(compare_counted_with_base(instructions_record(1.0, "AMD EPYC"), no_suite, cfg, "0123456789abcdef"),
                       doctest::Contains("has no instructions suite"), GateError);
}

TEST_CASE("stored counts: compared only where the CPU fingerprint matches; without_suite drops them and their identity") {
  const GateConfig cfg = config_with_instruction_tolerance();
  auto stored_record = instructions_record(223586.625, "Intel Xeon");
  stored_record.suites["ttft"].name = "ttft";
  stored_record.suites["ttft"].metrics["prompt_tokens"] = test::metric({64}, MetricKind::counted, records::Better::lower, "tokens");
  const Baseline stored = init_baseline(stored_record, cfg, "cpu-test", ChangeStamp{"abc", "2026-12-02T00:00:00Z"}, "init");
  CHECK(stored_counts_match(stored, instructions_record(1.0, "Intel Xeon")));
  CHECK_FALSE(stored_counts_match(stored, instructions_record(1.0, "AMD EPYC")));  // another CPU of the class
  CHECK_FALSE(stored_counts_match(Baseline{}, instructions_record(1.0, "AMD EPYC")));  // no stored counts: not an error
  const Baseline rest = without_suite(stored);
  CHECK(rest.metrics.count("instructions/instructions_per_decode_token") == 0);
  CHECK(rest.metrics.count("ttft/prompt_tokens") == 1);
  CHECK_FALSE(rest.identity["suites"].contains("instructions"));
  CHECK(rest.identity["suites"].contains("ttft"));
  CHECK(counted_on_text(stored_record.suites["instructions"].config) == "Intel Xeon, flags sha256 ab12cd34ef56, valgrind-3.19.0");
}
