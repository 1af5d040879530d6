// CLI level: start the atlas-serve binary on a free loopback port, stream a completion with
// libcurl, stop it with SIGTERM and check it exits 0 after draining. The binary comes from
// $ATLAS_SERVE_EXE (set by tests/CMakeLists.txt).
#if ATLAS_HAVE_CURL && ATLAS_HAVE_HTTPLIB

#include <chrono>
#include <cstdlib>
#include <memory>
#include <fstream>

#include <doctest/doctest.h>

#include "common/process.hpp"
#include "suites/endpoint/endpoint_target.hpp"
#include "tests/loopback_socket.hpp"
#include "tests/serve_process.hpp"
#include "tests/test_data.hpp"

TEST_CASE("atlas-serve binary: serves stories260K on loopback, streams, drains and exits 0 on SIGTERM") {
  const std::string exe = atlas::test::atlas_serve_exe();
  if (exe.empty()) return;
  atlas::test::require_data(atlas::test::stories_bin());
  atlas::test::ServeProcess server(exe, {"--model", atlas::test::stories_bin().string(), "--tokenizer",
                                         atlas::test::stories_tok().string(), "--served-model-name", "stories",
                                         "--queue-limit", "2", "--threads", "1"});
  const std::string url = server.url;
  CHECK(url.ends_with("/v1"));
  {
    atlas::suites::endpoint::EndpointOptions o;
    o.url = url;
    atlas::suites::endpoint::EndpointTarget target(o);
    CHECK(target.served_model() == "stories");
    atlas::suites::TargetRequest req;
    req.prompt_text = "Once upon a time";
    req.max_new_tokens = 16;
    req.ignore_eos = true;
    const auto r = target.generate(req);
    REQUIRE(r.ok);
    CHECK(r.completion_tokens == 16);
    CHECK(r.token_t_ns.size() >= 1);
    CHECK(!r.text.empty());
  }
  CHECK(server.stop() == 0);
  CHECK(server.child.captured.find("SIGTERM: draining") != std::string::npos);
  CHECK(server.child.captured.find("stopped (1 completed") != std::string::npos);
}

TEST_CASE("atlas-serve binary: --api-key-file and --api-key-env; the endpoint client's --api-key-env gets in, no key gets 401") {
  const std::string exe = atlas::test::atlas_serve_exe();
  if (exe.empty()) return;
  atlas::test::require_data(atlas::test::stories_bin());
  const auto dir = atlas::test::scratch_dir("serve_api_keys");
  std::ofstream(dir / "keys") << "# atlas-serve keys\nsk-file-key\n";
  ::setenv("ATLAS_TEST_SERVE_ENV_KEY", "sk-env-key", 1);
  atlas::test::ServeProcess server(exe, {"--model", atlas::test::stories_bin().string(), "--tokenizer", atlas::test::stories_tok().string(),
                                         "--served-model-name", "stories", "--threads", "1", "--api-key-file", (dir / "keys").string(),
                                         "--api-key-env", "ATLAS_TEST_SERVE_ENV_KEY"});
  CHECK(server.child.captured.find("2 API key(s))") != std::string::npos);
  atlas::suites::endpoint::EndpointOptions o;
  o.url = server.url;
  CHECK_THROWS_WITH(atlas::suites::endpoint::EndpointTarget{o}, doctest::Contains("HTTP 401"));
  for (const char* key : {"sk-file-key", "sk-env-key"}) {
    ::setenv("ATLAS_TEST_CLIENT_KEY", key, 1);
    o.api_key_env = "ATLAS_TEST_CLIENT_KEY";
    atlas::suites::endpoint::EndpointTarget target(o);
    CHECK(target.served_model() == "stories");
    // /v1/models names the served model, never the model file's path.
    CHECK(target.provenance()["models"].dump().find(atlas::test::stories_bin().parent_path().string()) == std::string::npos);
    atlas::suites::TargetRequest req;
    req.prompt_text = "Once upon a time";
    req.max_new_tokens = 4;
    req.ignore_eos = true;
    const auto r = target.generate(req);
    REQUIRE(r.ok);
    CHECK(r.completion_tokens == 4);
  }
  ::setenv("ATLAS_TEST_CLIENT_KEY", "sk-wrong", 1);
  CHECK_THROWS_WITH(atlas::suites::endpoint::EndpointTarget{o}, doctest::Contains("HTTP 401"));
  CHECK(server.stop() == 0);
  CHECK(server.child.captured.find("stopped (2 completed") != std::string::npos);
}

TEST_CASE("atlas-serve binary: an API key variable that is not set exits 3") {
  const std::string exe = atlas::test::atlas_serve_exe();
  if (exe.empty()) return;
  atlas::test::require_data(atlas::test::stories_bin());
  atlas::test::ChildProcess bad({exe, "--model", atlas::test::stories_bin().string(), "--tokenizer", atlas::test::stories_tok().string(),
                                 "--port", "0", "--api-key-env", "ATLAS_TEST_SURELY_UNSET_KEY"});
  CHECK(bad.wait_exit(20000) == 3);
}

TEST_CASE("atlas-serve binary: SIGTERM with 9 streams open exits within the drain timeout, the streams stopped") {
  const std::string exe = atlas::test::atlas_serve_exe();
  if (exe.empty()) return;
  atlas::test::require_data(atlas::test::stories_bin());
  // 5 ms per token and 400 tokens a stream: the nine would take 18 s one after the other.
  atlas::test::ServeProcess server(exe, {"--model", atlas::test::stories_bin().string(), "--tokenizer", atlas::test::stories_tok().string(),
                                         "--served-model-name", "stories", "--threads", "1", "--queue-limit", "16", "--drain-timeout", "1",
                                         "--inject-decode-delay-us", "5000"});
  const int port = std::stoi(server.url.substr(server.url.rfind(':') + 1));
  const std::string body = R"({"model":"stories","prompt":"Once","max_tokens":400,"ignore_eos":true,"stream":true})";
  std::vector<std::unique_ptr<atlas::test::LoopbackSocket>> streams;  // never read: clients that do not read either
  for (int i = 0; i < 9; ++i) {
    streams.push_back(std::make_unique<atlas::test::LoopbackSocket>(port));
    REQUIRE(streams.back()->send("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " +
                                 std::to_string(body.size()) + "\r\n\r\n" + body));
  }
  ::usleep(300000);
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(server.stop(15000) == 0);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("exit " << took << " s after SIGTERM (drain timeout 1 s)");
  CHECK(took < 1.0 + 2.0 + 1.0);
  server.child.read_until("by the drain timeout;", 2000);
  CHECK(server.child.captured.find("9 stopped by the drain timeout") != std::string::npos);
}

TEST_CASE("atlas-serve binary: a usage error exits 3 with CLI11's message (not CLI11's own 105 / 106 / 109); --help exits 0") {
  const std::string exe = atlas::test::atlas_serve_exe();
  if (exe.empty()) return;
  const auto unknown = atlas::run_process_with({exe, "--model", "m.bin", "--no-such-option"}, {});
  INFO(unknown.err);
  CHECK(unknown.exit_status == 3);
  CHECK(unknown.err.find("--no-such-option") != std::string::npos);
  const auto bad_value = atlas::run_process_with({exe, "--model", "m.bin", "--port", "70000"}, {});
  INFO(bad_value.err);
  CHECK(bad_value.exit_status == 3);
  CHECK(bad_value.err.find("--port") != std::string::npos);
  const auto missing = atlas::run_process_with({exe, "--port", "0"}, {});
  INFO(missing.err);
  CHECK(missing.exit_status == 3);
  CHECK(missing.err.find("--model is required") != std::string::npos);
  const auto help = atlas::run_process_with({exe, "--help"}, {});
  CHECK(help.exit_status == 0);
  CHECK(help.out.find("--max-connections") != std::string::npos);
}

TEST_CASE("atlas-serve binary: a bad model path exits 3 with the path in the message") {
  const std::string exe = atlas::test::atlas_serve_exe();
  if (exe.empty()) return;
  atlas::test::ChildProcess bad({exe, "--model", "/nonexistent/model.bin", "--port", "0"});
  CHECK(bad.wait_exit(20000) == 3);
}

#endif
