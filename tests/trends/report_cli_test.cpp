// `atlas-bench report` end to end: exit 1 on a drift, 0 without, a broken record named on the
// way, the site written.
#include <doctest/doctest.h>

#include "common/atomic_file.hpp"
#include "tests/cli/cli_util.hpp"
#include "tests/trends/trend_fixtures.hpp"

using namespace atlas;
namespace fs = std::filesystem;

namespace {

void write_store(const fs::path& store, double step, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto samples = test::history_samples(rng, 24, 100.0, {8, 16}, step);
  for (int i = 0; i < 24; ++i)
    records::write_to_store(test::trend_record(test::fake_sha(i), i, samples[i]), store);
}

}  // namespace

TEST_CASE("report CLI: a drift exits 1 and names it; a flat store exits 0; a broken record is skipped by name") {
  auto run = test::cli_runner("trends-report-cli");
  if (!run) return;
  // Nightly's config: 3 % timed tolerance, no BASELINE: judged against the history's start.
  write_store(run->cwd / "drift" / ".benchmarks", 0.03, 1);
  const auto drift = (*run)({"report", "--store", (run->cwd / "drift" / ".benchmarks").string(), "--baselines",
                             (run->cwd / "none").string(), "--no-git", "--out", (run->cwd / "site").string()});
  CHECK(drift.exit_status == 1);
  CHECK(drift.out.find("REGRESSION") != std::string::npos);
  CHECK(drift.out.find("decode-anatomy/us_per_token") != std::string::npos);
  CHECK(drift.out.find("between") != std::string::npos);  // a step with its commit range
  CHECK(fs::exists(run->cwd / "site" / "index.html"));
  CHECK(fs::exists(run->cwd / "site" / "cpu-test" / "index.html"));

  const fs::path flat = run->cwd / "flat" / ".benchmarks";
  write_store(flat, 0.0, 2);
  const fs::path broken = flat / "cpu-test" / test::fake_sha(5) / "nightly-20260101T000530Z.json";
  write_file_atomic(broken, "not json");
  const auto pass = (*run)({"report", "--store", flat.string(), "--baselines", (run->cwd / "none").string(), "--no-git"});
  CHECK(pass.exit_status == 0);
  CHECK(pass.out.find("skipped (does not parse): " + broken.string()) != std::string::npos);
  CHECK(pass.out.find("result: pass") != std::string::npos);

  const auto bad = (*run)({"report", "--store", flat.string(), "--permutations", "0"});
  CHECK(bad.exit_status == 3);
}
