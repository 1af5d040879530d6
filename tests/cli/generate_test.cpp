// generate reports one-time set-up apart from TTFT (CUDA counted ~150 ms of set-up as TTFT):
// with a warm-up request the JSON has load_ms, warmup_ms and setup_ms, and the warm-up does not
// change what is generated.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tests/cli/cli_util.hpp"
#include "tests/test_data.hpp"

TEST_CASE("generate --json: set-up (load, warm-up) reported apart from TTFT; the warm-up changes no output") {
  const auto run = atlas::test::cli_runner("cli_generate_setup");
  if (!run) return;
  atlas::test::require_data(atlas::test::stories_bin());
  auto gen = [&](const std::string& warmup) {
    const auto r = (*run)({"generate", "--model", atlas::test::stories_bin().string(), "--prompt", "Once upon a time",
                           "--max-tokens", "24", "--temperature", "0.8", "--seed", "7", "--threads", "1", "--json", warmup});
    INFO(r.err);
    REQUIRE(r.exit_status == 0);
    return nlohmann::json::parse(r.out);
  };
  const auto warm = gen("--warmup");
  const auto cold = gen("--no-warmup");
  CHECK(warm["output_ids"] == cold["output_ids"]);
  CHECK(warm["output_ids"].size() == 24);
  CHECK(warm["warmup"] == true);
  CHECK(cold["warmup"] == false);
  REQUIRE(warm["warmup_ms"].is_number());
  CHECK(cold["warmup_ms"].is_null());
  for (const auto* j : {&warm, &cold}) {
    CHECK((*j)["load_ms"].get<double>() > 0.0);
    CHECK((*j)["ttft_ms"].get<double>() > 0.0);
  }
  CHECK(warm["setup_ms"].get<double>() ==
        doctest::Approx(warm["load_ms"].get<double>() + warm["warmup_ms"].get<double>()));
  CHECK(cold["setup_ms"].get<double>() == doctest::Approx(cold["load_ms"].get<double>()));
}

TEST_CASE("generate --max-tokens 2^31-1: stops when the context is full, says so on stderr and in stop, never a silent clamp") {
  const auto run = atlas::test::cli_runner("cli_generate_max_tokens");
  if (!run) return;
  atlas::test::require_data(atlas::test::stories_bin());
  const auto r = (*run)({"generate", "--model", atlas::test::stories_bin().string(), "--prompt", "Once upon a time", "--max-tokens",
                         "2147483647", "--max-seq-len", "64", "--threads", "1", "--json"});
  INFO(r.err);
  REQUIRE(r.exit_status == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto prompt = j["prompt_ids"].size();
  CHECK(j["stop"] == "context_full");
  CHECK(j["output_ids"].size() == 64 - prompt + 1);
  CHECK(r.err.find("--max-tokens 2147483647 is more than the context leaves (max_seq_len 64 - " + std::to_string(prompt) +
                   " prompt tokens + 1): at most " + std::to_string(64 - prompt + 1) + " new tokens, then stop: context_full") != std::string::npos);
}
