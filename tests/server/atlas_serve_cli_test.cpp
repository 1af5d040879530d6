// CLI level: start the atlas-serve binary on a free loopback port, stream a completion with
// libcurl, stop it with SIGTERM and check it exits 0 after draining. The binary comes from
// $ATLAS_SERVE_EXE (set by tests/CMakeLists.txt).
#if ATLAS_HAVE_CURL && ATLAS_HAVE_HTTPLIB

#include <doctest/doctest.h>

#include "suites/endpoint/endpoint_target.hpp"
#include "tests/serve_process.hpp"
#include "tests/test_data.hpp"

TEST_CASE("atlas-serve binary: serves stories260K on loopback, streams, drains and exits 0 on SIGTERM") {
  const std::string exe = atlas::test::atlas_serve_exe();
  if (exe.empty()) return;
  if (!std::filesystem::exists(atlas::test::stories_bin())) {
    MESSAGE("skipped: " << atlas::test::stories_bin() << " not found");
    return;
  }
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

TEST_CASE("atlas-serve binary: a bad model path exits 3 with the path in the message") {
  const std::string exe = atlas::test::atlas_serve_exe();
  if (exe.empty()) return;
  atlas::test::ChildProcess bad({exe, "--model", "/nonexistent/model.bin", "--port", "0"});
  CHECK(bad.wait_exit(20000) == 3);
}

#endif
