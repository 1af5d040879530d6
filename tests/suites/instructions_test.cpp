// The instructions suite: callgrind dump parsing, and (when valgrind is installed, as
// tools/install-deps.sh does) the counts themselves through the real atlas-bench probe: equal
// run to run, and the extra-work hook adds exactly its loop to the decode count.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "common/env_flag.hpp"
#include "common/process.hpp"
#include "suites/engine_target.hpp"
#include "suites/error.hpp"
#include "suites/instructions/callgrind_output.hpp"
#include "suites/instructions/instructions_suite.hpp"
#include "tests/built_exe.hpp"
#include "tests/suites/fake_target.hpp"
#include "tests/sanitized.hpp"
#include "tests/test_data.hpp"
#include "tests/skip.hpp"

using namespace atlas;
using namespace atlas::suites;

TEST_CASE("callgrind dump: trigger, events and totals; trailing zero totals may be omitted") {
  const std::string text =
      "# callgrind format\nversion: 1\ncmd: atlas-bench instruction-probe\n"
      "desc: Trigger: Client Request: decode\n"
      "events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\n"
      "fn=(1) main\n3 4\n"
      "totals: 6516867 5311094 581920 1 280084 4323\n";
  const CallgrindDump d = parse_callgrind_dump(text, "cg.out.2");
  CHECK(d.trigger == "Client Request: decode");
  CHECK(event_total(d, "Ir") == 6516867ULL);
  CHECK(event_total(d, "D1mr") == 280084ULL);
  CHECK(event_total(d, "D1mw") == 4323ULL);
  CHECK(event_total(d, "DLmw") == 0ULL);  // omitted: zero
  CHECK(event_total(d, "Bc") == 0ULL);    // not collected

  const std::vector<CallgrindDump> dumps = {d};
  CHECK(&dump_for_region(dumps, "decode") == &dumps[0]);
  CHECK_THROWS_WITH_AS(dump_for_region(dumps, "prefill"),
                       doctest::Contains("no callgrind dump for region 'prefill' (dumps found: 'Client Request: decode')"),
                       SuiteError);
  CHECK_THROWS_WITH_AS(parse_callgrind_dump("events: Ir\n", "x"), doctest::Contains("x: callgrind dump has no 'totals:'"),
                       SuiteError);
  CHECK_THROWS_WITH_AS(parse_callgrind_dump("events: Ir\ntotals: 12z\n", "x"),
                       doctest::Contains("total of event Ir = '12z' is not a count"), SuiteError);
}

namespace {

bool have_valgrind() {
  const ProcessResult r = run_process({"valgrind", "--version"}, {});
  return r.exit_status == 0;
}

records::SuiteResult count(int inject_work) {
  engine::EngineOptions eo;
  eo.model = test::stories_bin().string();
  eo.backend.inject_decode_work = inject_work;
  EngineTarget target(eo);
  SuiteOptions o;
  o.config = {{"prompt_tokens", 8}, {"decode_tokens", 4}, {"probe_executable", test::bench_exe_or_skip()}};
  return run_instructions_suite(target, o);
}

double value(const records::SuiteResult& r, const std::string& m) { return r.metrics.at(m).samples.at(0); }

}  // namespace

TEST_CASE("instructions suite: counts are equal run to run; --inject-decode-work adds its loop to decode only") {
  if (atlas::test::bench_exe_or_skip().empty()) return;
  if (atlas::test::kSanitized) {
    ATLAS_SKIP("valgrind cannot run an AddressSanitizer build (make test-sanitize); make test runs this");
  }
  if (!have_valgrind()) {
    // CI installs valgrind (tools/install-deps.sh): there a missing valgrind is a failure.
    REQUIRE_MESSAGE(!atlas::ci_env(), "valgrind is missing on CI (tools/install-deps.sh installs it)");
    ATLAS_SKIP("valgrind is not installed");
  }
  const auto a = count(0);
  const auto b = count(0);
  const auto c = count(2000);
  CHECK(a.config.at("prompt_tokens") == 8);
  CHECK(a.config.at("counted_on").at("valgrind").get<std::string>().rfind("valgrind-", 0) == 0);
  for (const char* m : {"instructions_per_decode_token", "instructions_per_prefill_token", "d1_misses_per_decode_token",
                        "output_fingerprint"}) {
    CAPTURE(m);
    CHECK(value(a, m) == value(b, m));  // deterministic: no tolerance needed run to run
  }
  CHECK(value(a, "instructions_per_decode_token") > 10000);  // a forward of stories260K is ~400k
  // Prefill never runs the hook; decode runs it before each of the 3 one-token steps after the
  // first (4 tokens): 2000 iterations x 3 steps / 4 tokens, a few instructions per iteration.
  CHECK(value(c, "instructions_per_prefill_token") == value(a, "instructions_per_prefill_token"));
  const double extra = value(c, "instructions_per_decode_token") - value(a, "instructions_per_decode_token");
  const double iterations_per_token = 2000.0 * 3 / 4;
  CHECK(extra >= 4 * iterations_per_token);
  CHECK(extra <= 20 * iterations_per_token);
  CHECK(value(c, "output_fingerprint") == value(a, "output_fingerprint"));  // same tokens, more work
}

TEST_CASE("instructions suite: config errors name the field; a non-engine target is refused") {
  SuiteOptions o;
  o.config = {{"decode_tokens", 0}};
  o.config_source = "pr.json: suites.instructions";
  CHECK_THROWS_WITH_AS(InstructionsConfig::from(o), doctest::Contains("decode_tokens"), SuiteError);
  o.config = {{"prompt_token", 3}};
  CHECK_THROWS_WITH_AS(InstructionsConfig::from(o), doctest::Contains("prompt_token"), SuiteError);
  test::FakeTarget fake;
  CHECK_THROWS_WITH_AS(run_instructions_suite(fake, SuiteOptions{}), doctest::Contains("target fake is not the in-process engine"),
                       SuiteError);
}
