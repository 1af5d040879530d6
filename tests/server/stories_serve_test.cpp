// The real engine behind the server: stories260K served in-process on a loopback port and
// driven through EndpointTarget (libcurl, SSE) must give the same greedy tokens as the
// in-process session, with usage and prefix-cache accounting.
#if ATLAS_HAVE_CURL && ATLAS_HAVE_HTTPLIB

#include <doctest/doctest.h>

#include "server/generator.hpp"
#include "server/server.hpp"
#include "suites/endpoint/endpoint_target.hpp"
#include "tests/test_data.hpp"

using namespace atlas;

namespace {
server::GeneratorOptions stories_options() {
  server::GeneratorOptions o;
  o.model = test::stories_bin();
  o.tokenizer = test::stories_tok();
  o.threads = 1;
  return o;
}
}  // namespace

TEST_CASE("stories260K over HTTP: same greedy text as in-process, usage and cached tokens") {
  test::require_data(test::stories_bin());
  auto reference = server::open_session_generator(stories_options());
  const auto prompt = reference->tokenizer().encode("Once upon a time", true);
  engine::GenerateRequest g;
  g.prompt_ids = prompt;
  g.max_new_tokens = 24;
  g.stop_ids = reference->tokenizer().stop_ids();
  const auto expect = reference->generate(g, {});
  const std::string expect_text = reference->tokenizer().decode(expect.output_ids, prompt.back());
  REQUIRE(!expect.output_ids.empty());

  auto gen = server::open_session_generator(stories_options());
  server::ServerOptions so;
  so.served_model_name = "stories260K";
  server::Server srv(*gen, so);
  const int port = srv.start();
  {
    suites::endpoint::EndpointOptions eo;
    eo.url = "http://127.0.0.1:" + std::to_string(port) + "/v1";
    eo.tokenizer = std::shared_ptr<const engine::Tokenizer>(&gen->tokenizer(), [](const engine::Tokenizer*) {});
    suites::endpoint::EndpointTarget target(eo);
    CHECK(target.served_model() == "stories260K");
    CHECK(target.context_length() == gen->context_length());

    suites::TargetRequest req;
    req.prompt_text = "Once upon a time";
    req.max_new_tokens = 24;
    const auto a = target.generate(req);
    REQUIRE(a.ok);
    CHECK(a.text == expect_text);
    CHECK(a.prompt_tokens == static_cast<int>(prompt.size()));
    CHECK(a.completion_tokens == static_cast<int>(expect.output_ids.size()));
    CHECK(a.token_t_ns.size() == expect.output_ids.size());
    CHECK(a.cached_tokens == 0);

    // The same prompt again, as token ids: all but the last prompt token come from the cache.
    req.prompt_text.clear();
    req.prompt_ids = prompt;
    const auto b = target.generate(req);
    REQUIRE(b.ok);
    CHECK(b.text == expect_text);
    CHECK(b.cached_tokens == static_cast<int>(prompt.size()) - 1);
    CHECK(b.prefilled_tokens == 1);

    // Cold: reset_session() clears the server's prefix cache.
    target.reset_session();
    CHECK(target.provenance()["reset_prefix_cache"] == "ok");
    CHECK(target.generate(req).cached_tokens == 0);

    // Chat through the fallback template.
    suites::TargetRequest chat;
    chat.messages = nlohmann::json::array({{{"role", "user"}, {"content", "Tell me a story."}}});
    chat.max_new_tokens = 8;
    const auto c = target.generate(chat);
    REQUIRE(c.ok);
    CHECK(c.completion_tokens > 0);
    CHECK(c.prompt_tokens ==
          static_cast<int>(gen->tokenizer().encode("User: Tell me a story.\n\nAssistant:", true).size()));
  }
  srv.stop();
}

#endif
