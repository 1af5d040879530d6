// The real atlas-serve binary on loopback with stories260K: logprobs equal the engine's own
// (raw distribution, whatever the temperature) in both OpenAI shapes, min_tokens decodes past
// the model's EOS, and a client that leaves during a long prefill stops it at a chunk boundary
// (the slot is free long before the prefill would have ended; nothing of it is cached).
#if ATLAS_HAVE_CURL && ATLAS_HAVE_HTTPLIB

#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <httplib.h>

#include "engine/backend.hpp"
#include "engine/formats/llama2c.hpp"
#include "engine/session.hpp"
#include "suites/endpoint/endpoint_target.hpp"
#include "suites/engine_target.hpp"
#include "tests/loopback_socket.hpp"
#include "tests/serve_process.hpp"
#include "tests/server/served_fake.hpp"
#include "tests/test_data.hpp"

using nlohmann::json;

namespace {
int port_of(const std::string& url) { return std::stoi(url.substr(url.rfind(':') + 1)); }

/// The response body; REQUIREs a 200 unless `status` is given to receive the status.
std::string post_raw(int port, const std::string& path, const json& body, int* status = nullptr) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(30, 0);
  auto r = c.Post(path.c_str(), body.dump(), "application/json");
  REQUIRE(r);
  if (status) *status = r->status;
  else REQUIRE_MESSAGE(r->status == 200, r->body);
  return r->body;
}
json post(int port, const std::string& path, const json& body, int* status = nullptr) {
  return json::parse(post_raw(port, path, body, status));
}

std::vector<std::string> serve_args(std::vector<std::string> extra = {}) {
  std::vector<std::string> a{"--model", atlas::test::stories_bin().string(), "--tokenizer", atlas::test::stories_tok().string(),
                             "--served-model-name", "stories", "--threads", "1"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

const atlas::engine::Model& stories() {
  static const atlas::engine::Model m = atlas::engine::load_llama2c(atlas::test::stories_bin(), atlas::test::stories_tok());
  return m;
}
}  // namespace

TEST_CASE("atlas-serve binary: logprobs equal the engine's in process, completions and streamed chat, greedy and sampled") {
  const std::string exe = atlas::test::atlas_serve_exe();
  if (exe.empty()) return;
  atlas::test::require_data(atlas::test::stories_bin());
  atlas::test::ServeProcess server(exe, serve_args());
  const int port = port_of(server.url);
  auto backend = atlas::engine::make_backend(stories(), {});
  atlas::engine::Session session(*backend);
  const std::vector<int> prompt = stories().tokenizer->encode("Once upon a time", true);

  for (const float temperature : {0.0f, 1.0f}) {
    INFO("temperature " << temperature);
    atlas::engine::GenerateRequest g;
    g.prompt_ids = prompt;
    g.max_new_tokens = 12;
    g.sampling.temperature = temperature;
    g.sampling.seed = 7;
    g.stop_ids = stories().tokenizer->stop_ids();
    g.logprobs = true;
    g.top_logprobs = 3;
    session.reset();
    const auto want = session.generate(g);
    REQUIRE(!want.output_ids.empty());

    post(port, "/reset_prefix_cache", json::object());  // a cold prefill on both sides: the same float operations
    const json body = post(port, "/v1/completions",
                           {{"model", "stories"}, {"prompt", prompt}, {"max_tokens", 12}, {"temperature", temperature}, {"seed", 7},
                            {"logprobs", 3}, {"return_token_ids", true}, {"return_tokens_as_token_ids", true}});
    const json& ch = body["choices"][0];
    REQUIRE(ch["token_ids"].get<std::vector<int>>() == want.output_ids);
    const json& lp = ch["logprobs"];
    REQUIRE(lp["tokens"].size() == want.output_ids.size());
    for (std::size_t i = 0; i < want.output_ids.size(); ++i) {
      INFO("token " << i);
      CHECK(lp["tokens"][i] == "token_id:" + std::to_string(want.output_ids[i]));
      CHECK(lp["token_logprobs"][i].get<double>() == doctest::Approx(want.logprobs[i].chosen.logprob).epsilon(1e-6));
      json top = {{"token_id:" + std::to_string(want.output_ids[i]), want.logprobs[i].chosen.logprob}};
      for (const auto& t : want.logprobs[i].top) top["token_id:" + std::to_string(t.id)] = t.logprob;
      REQUIRE(lp["top_logprobs"][i].size() == top.size());
      for (const auto& [k, v] : top.items()) CHECK(lp["top_logprobs"][i][k].get<double>() == doctest::Approx(v.get<double>()).epsilon(1e-6));
    }
  }

  // Chat, streamed: the entries' bytes spell the content, one entry per generated token, the
  // alternatives in descending order with the greedy choice first.
  int status = 0;
  const std::string raw = post_raw(port, "/v1/chat/completions",
                        {{"model", "stories"}, {"messages", {{{"role", "user"}, {"content", "Tell a story"}}}}, {"max_tokens", 16},
                         {"temperature", 0}, {"logprobs", true}, {"top_logprobs", 2}, {"stream", true},
                         {"stream_options", {{"include_usage", true}}}},
                        &status);
  REQUIRE(status == 200);
  std::string text, spelled;
  int entries = 0, usage_tokens = -1;
  for (const json& c : atlas::test::sse_json(raw)) {
    if (c.contains("usage") && !c["usage"].is_null()) usage_tokens = c["usage"]["completion_tokens"];
    if (c["choices"].empty()) continue;
    const json& ch = c["choices"][0];
    if (ch["delta"].contains("content")) text += ch["delta"]["content"].get<std::string>();
    if (ch["logprobs"].is_null()) continue;
    for (const json& e : ch["logprobs"]["content"]) {
      ++entries;
      for (int b : e["bytes"]) spelled += static_cast<char>(b);
      REQUIRE(e["top_logprobs"].size() == 2);
      CHECK(e["top_logprobs"][0]["id"] == e["id"]);
      CHECK(e["top_logprobs"][0]["logprob"] == e["logprob"]);
      CHECK(e["top_logprobs"][0]["logprob"].get<double>() >= e["top_logprobs"][1]["logprob"].get<double>());
      CHECK(e["logprob"].get<double>() <= 0.0);
    }
  }
  CHECK(entries == usage_tokens);
  CHECK(entries > 0);
  CHECK(spelled == text);
  CHECK(server.stop() == 0);
}

TEST_CASE("atlas-serve binary: min_tokens decodes past the model's EOS; ignore_eos to max_tokens") {
  const std::string exe = atlas::test::atlas_serve_exe();
  if (exe.empty()) return;
  atlas::test::require_data(atlas::test::stories_bin());
  atlas::test::ServeProcess server(exe, serve_args());
  const int port = port_of(server.url);
  const json q = {{"model", "stories"}, {"prompt", "Once upon a time"}, {"max_tokens", 400}, {"temperature", 0}};
  const json free_run = post(port, "/v1/completions", q);
  REQUIRE(free_run["choices"][0]["finish_reason"] == "stop");  // stories260K ends its story with EOS
  const int natural = free_run["usage"]["completion_tokens"];
  MESSAGE("greedy completion ends with EOS after " << natural << " tokens");
  json m = q;
  m["min_tokens"] = natural + 20;
  const json longer = post(port, "/v1/completions", m);
  CHECK(longer["usage"]["completion_tokens"].get<int>() >= natural + 20);
  // The first `natural` tokens are the free run's text: EOS was passed over, not the text changed.
  CHECK(longer["choices"][0]["text"].get<std::string>().starts_with(free_run["choices"][0]["text"].get<std::string>()));
  m["max_tokens"] = natural + 20;
  const json exact = post(port, "/v1/completions", m);
  CHECK(exact["usage"]["completion_tokens"] == natural + 20);
  CHECK(exact["choices"][0]["finish_reason"] == "length");
  json e = q;
  e["ignore_eos"] = true;
  e["max_tokens"] = natural + 7;
  CHECK(post(port, "/v1/completions", e)["usage"]["completion_tokens"] == natural + 7);
  json bad = q;
  bad["min_tokens"] = 401;
  int status = 0;
  const json err = post(port, "/v1/completions", bad, &status);
  CHECK(status == 400);
  CHECK(err["error"]["param"] == "min_tokens");
  CHECK(err["error"]["message"] == "'min_tokens' (401) must not exceed max_tokens (400)");
  CHECK(server.stop() == 0);
}

TEST_CASE("atlas-serve binary: a client that leaves during a long prefill stops it at the next chunk boundary") {
  const std::string exe = atlas::test::atlas_serve_exe();
  if (exe.empty()) return;
  atlas::test::require_data(atlas::test::stories_bin());
  // 6 ms per prompt token at the CPU backend's 256-token chunk boundaries: a 500-token prompt
  // prefills in 3.0 s, its first chunk in 1.5 s.
  atlas::test::ServeProcess server(exe, serve_args({"--inject-prefill-delay-us", "6000"}));
  const int port = port_of(server.url);
  std::vector<int> long_prompt{1};
  for (int i = 0; long_prompt.size() < 500; ++i) long_prompt.push_back(259 + (i * 31) % 250);
  const std::string body = json{{"model", "stories"}, {"prompt", long_prompt}, {"max_tokens", 4}}.dump();
  const auto t0 = std::chrono::steady_clock::now();
  {
    atlas::test::LoopbackSocket a(port);
    REQUIRE(a.send("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " +
                   std::to_string(body.size()) + "\r\n\r\n" + body));
    ::usleep(300000);  // inside the first chunk
  }  // the client leaves
  // The next request shares the long prompt's first 10 tokens; it waits for the slot.
  const json b = post(port, "/v1/completions",
                      {{"model", "stories"}, {"prompt", std::vector<int>(long_prompt.begin(), long_prompt.begin() + 10)}, {"max_tokens", 1}});
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("the next request answered " << took << " s after the long one was sent (its whole prefill: 3.0 s)");
  CHECK(b["usage"]["completion_tokens"] == 1);
  // Nothing of the abandoned prefill is cached: it stopped before its end (a prefill that ran to
  // its end keeps the prompt cached, and 9 of these tokens would have been reused).
  CHECK(b["usage"]["prompt_tokens_details"]["cached_tokens"] == 0);
  CHECK(took < 2.5);  // the first chunk (1.5 s) and this prompt, not the whole 3.0 s
  CHECK(server.stop() == 0);
  CHECK(server.child.captured.find("1 completions stopped because their client left") != std::string::npos);
}

TEST_CASE("atlas-serve binary: the endpoint client asks for logprobs and reads what the in-process target computes") {
  const std::string exe = atlas::test::atlas_serve_exe();
  if (exe.empty()) return;
  atlas::test::require_data(atlas::test::stories_bin());
  atlas::test::ServeProcess server(exe, serve_args());
  atlas::suites::endpoint::EndpointOptions o;
  o.url = server.url;
  atlas::suites::endpoint::EndpointTarget endpoint(o);
  atlas::suites::EngineTarget local(atlas::engine::Engine::from_model(atlas::engine::load_llama2c(atlas::test::stories_bin(), atlas::test::stories_tok()), {}), {});
  atlas::suites::TargetRequest req;
  req.prompt_ids = stories().tokenizer->encode("Once upon a time", true);
  req.max_new_tokens = 10;
  req.top_logprobs = 2;
  for (const bool chat : {false, true}) {
    INFO("chat " << chat);
    atlas::suites::TargetRequest q = req;
    if (chat) q.messages = {{{"role", "user"}, {"content", "Once upon a time"}}};
    endpoint.reset_session();
    const auto got = endpoint.generate(q);
    REQUIRE_MESSAGE(got.ok, got.error);
    REQUIRE(got.logprobs.size() == static_cast<std::size_t>(got.completion_tokens));
    for (const auto& t : got.logprobs) {
      CHECK(t.chosen.logprob <= 0.0);
      CHECK(t.top.size() >= 2);
      CHECK(t.top.front().logprob >= t.top.back().logprob);
    }
    if (chat) {  // chat entries carry the id; the template's prompt has no in-process twin here
      for (const auto& t : got.logprobs) CHECK(t.chosen.id >= 0);
      continue;
    }
    local.reset_session();
    const auto want = local.generate(q);
    REQUIRE(want.ok);
    REQUIRE(want.logprobs.size() == got.logprobs.size());
    for (std::size_t i = 0; i < want.logprobs.size(); ++i) {
      INFO("token " << i);
      CHECK(got.logprobs[i].chosen.token == want.logprobs[i].chosen.token);
      CHECK(got.logprobs[i].chosen.logprob == doctest::Approx(want.logprobs[i].chosen.logprob).epsilon(1e-6));
      // Completions' dict: the 2 alternatives and the chosen one (when it is not among them).
      CHECK(got.logprobs[i].top.front().logprob == doctest::Approx(want.logprobs[i].top.front().logprob).epsilon(1e-6));
    }
  }
  CHECK(server.stop() == 0);
}

#endif
