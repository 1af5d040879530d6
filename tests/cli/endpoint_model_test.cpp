// `run --endpoint` reads --model only for its tokenizer: a preset is loaded without weights, so a
// release-sized preset names the endpoint's failure, not a host-memory refusal (it was built as
// float32 host arrays first: 318 GB for qwen3-next-80b-a3b).
#include <doctest/doctest.h>

#include <string>

#include "tests/cli/cli_util.hpp"

TEST_CASE("run --endpoint with a release-sized preset builds no host weights for its tokenizer") {
  const auto run = atlas::test::cli_runner("cli_endpoint_preset");
  if (!run) return;
  // Port 9 (discard) on the loopback: nothing listens, the connection is refused at once.
  const auto r = (*run)({"run", "--endpoint", "http://127.0.0.1:9", "--model", "preset:qwen3-next-80b-a3b", "--suite", "ttft",
                         "--no-store"});
  INFO(r.err);
  CHECK(r.exit_status != 0);
  CHECK(r.err.find("as float32 host weights") == std::string::npos);
  CHECK(r.err.find("--endpoint http://127.0.0.1:9") != std::string::npos);
}
