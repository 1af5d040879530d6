// The HTTP server in-process on an ephemeral loopback port, over the FakeGenerator.
#if ATLAS_HAVE_HTTPLIB  // atlas_server exists only where cpp-httplib is found
#include <csignal>
#include <future>
#include <thread>

#include <doctest/doctest.h>
#include <httplib.h>

#include "server/error.hpp"
#include "server/server.hpp"
#include "suites/endpoint/endpoint_target.hpp"
#include "suites/endpoint/sse_parser.hpp"
#include "tests/server/fake_generator.hpp"

using nlohmann::json;
using atlas::server::Server;
using atlas::server::ServerOptions;
using atlas::test::FakeGenerator;

namespace {

struct Fixture {
  FakeGenerator gen;
  ServerOptions opts;
  std::unique_ptr<Server> server;
  int port = 0;

  explicit Fixture(int queue_limit = 4) {
    std::signal(SIGPIPE, SIG_IGN);
    opts.served_model_name = "fake";
    opts.queue_limit = queue_limit;
    opts.max_body_bytes = 1 << 16;
  }
  void start() {
    server = std::make_unique<Server>(gen, opts);
    port = server->start();
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(10, 0);
    return c;
  }
  httplib::Result post(const std::string& path, const std::string& body) const {
    auto c = client();
    return c.Post(path.c_str(), body, "application/json");
  }
};

std::vector<std::string> sse_data(const std::string& body) {
  atlas::suites::endpoint::SseParser p;
  std::vector<atlas::suites::endpoint::SseEvent> evs;
  p.feed(body, evs);
  std::vector<std::string> out;
  for (auto& e : evs) out.push_back(e.data);
  return out;
}

void check_error(const httplib::Result& res, int status, const std::string& param, const std::string& code) {
  REQUIRE(res);
  CHECK(res->status == status);
  const json j = json::parse(res->body, nullptr, false);
  REQUIRE(j.is_object());
  REQUIRE(j.contains("error"));
  const json& e = j["error"];
  CHECK(e["message"].is_string());
  CHECK(!e["message"].get<std::string>().empty());
  CHECK(e["type"].is_string());
  if (param.empty()) CHECK(e["param"].is_null());
  else CHECK(e["param"] == param);
  if (code.empty()) CHECK(e["code"].is_null());
  else CHECK(e["code"] == code);
  CHECK(res->get_header_value("Content-Type") == "application/json");
}

}  // namespace

TEST_CASE("server: /health and /v1/models") {
  Fixture f;
  f.gen.context = 128;
  f.start();
  auto c = f.client();
  auto h = c.Get("/health");
  REQUIRE(h);
  CHECK(h->status == 200);
  CHECK(json::parse(h->body)["status"] == "ok");
  auto m = c.Get("/v1/models");
  REQUIRE(m);
  CHECK(m->status == 200);
  const json j = json::parse(m->body);
  CHECK(j["object"] == "list");
  REQUIRE(j["data"].size() == 1);
  CHECK(j["data"][0]["id"] == "fake");
  CHECK(j["data"][0]["max_model_len"] == 128);
  CHECK(j["data"][0]["atlas"]["chat_template"] == "fallback");
}

TEST_CASE("server: non-streaming completion with usage") {
  Fixture f;
  f.start();
  auto res = f.post("/v1/completions", R"({"model":"fake","prompt":"Once","max_tokens":50})");
  REQUIRE(res);
  REQUIRE(res->status == 200);
  const json j = json::parse(res->body);
  CHECK(j["object"] == "text_completion");
  CHECK(j["model"] == "fake");
  CHECK(j["choices"][0]["text"] == "Hello world");
  CHECK(j["choices"][0]["finish_reason"] == "stop");
  CHECK(j["usage"]["prompt_tokens"] == 5);  // BOS + 4 bytes
  CHECK(j["usage"]["completion_tokens"] == 11);
  CHECK(j["usage"]["total_tokens"] == 16);
  CHECK(j["usage"]["prompt_tokens_details"]["cached_tokens"] == 0);
  CHECK(f.gen.last_prompt == std::vector<int>{1, 'O' + 3, 'n' + 3, 'c' + 3, 'e' + 3});
}

TEST_CASE("server: max_tokens ends with finish_reason length; prompt as token ids") {
  Fixture f;
  f.start();
  auto res = f.post("/v1/completions", R"({"model":"fake","prompt":[1,70,71],"max_tokens":3})");
  REQUIRE(res);
  REQUIRE(res->status == 200);
  const json j = json::parse(res->body);
  CHECK(j["choices"][0]["text"] == "Hel");
  CHECK(j["choices"][0]["finish_reason"] == "length");
  CHECK(j["usage"]["prompt_tokens"] == 3);
  CHECK(f.gen.last_prompt == std::vector<int>{1, 70, 71});
}

TEST_CASE("server: ignore_eos decodes exactly max_tokens") {
  Fixture f;
  f.start();
  auto res = f.post("/v1/completions", R"({"model":"fake","prompt":"a","max_tokens":14,"ignore_eos":true})");
  REQUIRE(res);
  const json j = json::parse(res->body);
  CHECK(j["usage"]["completion_tokens"] == 14);
  CHECK(j["choices"][0]["finish_reason"] == "length");
}

TEST_CASE("server: prefix reuse across requests is reported as cached_tokens") {
  Fixture f;
  f.start();
  const std::string body = R"({"model":"fake","prompt":"The same long prompt","max_tokens":4})";
  auto a = f.post("/v1/completions", body);
  auto b = f.post("/v1/completions", body);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(json::parse(a->body)["usage"]["prompt_tokens_details"]["cached_tokens"] == 0);
  // 21 prompt tokens; all but the last come from the cache (its logits must be recomputed).
  CHECK(json::parse(b->body)["usage"]["prompt_tokens_details"]["cached_tokens"] == 20);
  auto r = f.client().Post("/reset_prefix_cache", "", "application/json");
  REQUIRE(r);
  CHECK(r->status == 200);
  auto c = f.post("/v1/completions", body);
  CHECK(json::parse(c->body)["usage"]["prompt_tokens_details"]["cached_tokens"] == 0);
}

TEST_CASE("server: streaming completion is SSE ending in [DONE], usage chunk has empty choices") {
  Fixture f;
  f.start();
  auto res = f.post("/v1/completions",
                    R"({"model":"fake","prompt":"x","stream":true,"stream_options":{"include_usage":true}})");
  REQUIRE(res);
  REQUIRE(res->status == 200);
  CHECK(res->get_header_value("Content-Type") == "text/event-stream");
  const auto data = sse_data(res->body);
  REQUIRE(data.size() == 11 + 1 + 1 + 1);  // one per token, finish, usage, [DONE]
  std::string text;
  for (std::size_t i = 0; i < 11; ++i) {
    const json c = json::parse(data[i]);
    CHECK(c["choices"][0]["finish_reason"].is_null());
    text += c["choices"][0]["text"].get<std::string>();
  }
  CHECK(text == "Hello world");
  const json fin = json::parse(data[11]);
  CHECK(fin["choices"][0]["finish_reason"] == "stop");
  const json usage = json::parse(data[12]);
  CHECK(usage["choices"].empty());
  CHECK(usage["usage"]["completion_tokens"] == 11);
  CHECK(data[13] == "[DONE]");
}

TEST_CASE("server: return_token_ids lists the generated ids, per chunk when streaming (vLLM's field)") {
  Fixture f;
  f.start();
  auto whole = f.post("/v1/completions", R"({"model":"fake","prompt":"x","return_token_ids":true})");
  REQUIRE(whole);
  const json w = json::parse(whole->body);
  const std::vector<int> ids = w["choices"][0]["token_ids"].get<std::vector<int>>();
  CHECK(static_cast<int>(ids.size()) == w["usage"]["completion_tokens"].get<int>());
  auto res = f.post("/v1/completions",
                    R"({"model":"fake","prompt":"x","stream":true,"return_token_ids":true,"stream_options":{"include_usage":true}})");
  REQUIRE(res);
  std::vector<int> streamed;
  for (const auto& d : sse_data(res->body)) {
    if (d == "[DONE]") continue;
    const json c = json::parse(d);
    if (c["choices"].empty()) continue;
    REQUIRE(c["choices"][0].contains("token_ids"));
    for (int id : c["choices"][0]["token_ids"]) streamed.push_back(id);
  }
  CHECK(streamed == ids);
  // Without the field the chunks carry no ids (OpenAI's shape).
  auto plain = f.post("/v1/completions", R"({"model":"fake","prompt":"x"})");
  CHECK_FALSE(json::parse(plain->body)["choices"][0].contains("token_ids"));
}

TEST_CASE("server: streaming chat starts with a role-only chunk") {
  Fixture f;
  f.gen.reply = "Hi";
  f.start();
  auto res = f.post("/v1/chat/completions",
                    R"({"model":"fake","messages":[{"role":"user","content":"hello"}],"stream":true})");
  REQUIRE(res);
  REQUIRE(res->status == 200);
  const auto data = sse_data(res->body);
  REQUIRE(data.size() == 5);  // role, H, i, finish, [DONE]
  const json first = json::parse(data[0]);
  CHECK(first["object"] == "chat.completion.chunk");
  CHECK(first["choices"][0]["delta"]["role"] == "assistant");
  CHECK(first["choices"][0]["delta"]["content"] == "");
  CHECK(json::parse(data[1])["choices"][0]["delta"]["content"] == "H");
  CHECK(json::parse(data[2])["choices"][0]["delta"]["content"] == "i");
  CHECK(json::parse(data[3])["choices"][0]["finish_reason"] == "stop");
  CHECK(data[4] == "[DONE]");
  // The fallback template rendered the conversation.
  std::string prompt;
  for (std::size_t i = 1; i < f.gen.last_prompt.size(); ++i) prompt += static_cast<char>(f.gen.last_prompt[i] - 3);
  CHECK(prompt == "User: hello\n\nAssistant:");
}

TEST_CASE("server: stop strings cut the text and are not returned") {
  Fixture f;
  f.start();
  auto res = f.post("/v1/completions", R"({"model":"fake","prompt":"x","stop":["o w","zz"]})");
  REQUIRE(res);
  const json j = json::parse(res->body);
  CHECK(j["choices"][0]["text"] == "Hell");
  CHECK(j["choices"][0]["finish_reason"] == "stop");
  CHECK(j["usage"]["completion_tokens"] == 7);  // "Hello w" decoded before the match
  // Streaming holds back a possible stop-string prefix: "o" is not sent before "o w" is ruled in.
  auto s = f.post("/v1/completions", R"({"model":"fake","prompt":"x","stop":"o w","stream":true})");
  std::string text;
  for (const auto& d : sse_data(s->body)) {
    if (d == "[DONE]") continue;
    text += json::parse(d)["choices"][0]["text"].get<std::string>();
  }
  CHECK(text == "Hell");
}

TEST_CASE("server: tool calls are parsed into tool_calls (non-streaming and streaming)") {
  Fixture f;
  f.gen.reply = R"(<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>)";
  f.start();
  const std::string req =
      R"({"model":"fake","messages":[{"role":"user","content":"weather?"}],)"
      R"("tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}])";
  auto res = f.post("/v1/chat/completions", req + "}");
  REQUIRE(res);
  REQUIRE(res->status == 200);
  const json j = json::parse(res->body);
  const json& msg = j["choices"][0]["message"];
  CHECK(msg["content"].is_null());
  REQUIRE(msg["tool_calls"].size() == 1);
  CHECK(msg["tool_calls"][0]["type"] == "function");
  CHECK(msg["tool_calls"][0]["function"]["name"] == "get_weather");
  CHECK(msg["tool_calls"][0]["function"]["arguments"] == R"({"city": "Paris"})");
  CHECK(j["choices"][0]["finish_reason"] == "tool_calls");

  auto s = f.post("/v1/chat/completions", req + R"(,"stream":true})");
  REQUIRE(s);
  int tool_chunks = 0;
  std::string content;
  for (const auto& d : sse_data(s->body)) {
    if (d == "[DONE]") continue;
    const json c = json::parse(d);
    const json& delta = c["choices"][0]["delta"];
    if (delta.contains("tool_calls")) {
      ++tool_chunks;
      CHECK(delta["tool_calls"][0]["index"] == 0);
      CHECK(delta["tool_calls"][0]["function"]["name"] == "get_weather");
      CHECK(delta["tool_calls"][0]["function"]["arguments"] == R"({"city": "Paris"})");
      CHECK(delta["tool_calls"][0]["id"].get<std::string>().rfind("call_", 0) == 0);
    }
    if (delta.contains("content")) content += delta["content"].get<std::string>();
    if (!c["choices"][0]["finish_reason"].is_null()) CHECK(c["choices"][0]["finish_reason"] == "tool_calls");
  }
  CHECK(tool_chunks == 1);
  CHECK(content.empty());
  // The tools were rendered into the prompt.
  std::string prompt;
  for (std::size_t i = 1; i < f.gen.last_prompt.size(); ++i) prompt += static_cast<char>(f.gen.last_prompt[i] - 3);
  CHECK(prompt.find(R"({"type": "function", "function": {"name": "get_weather")") != std::string::npos);
}

TEST_CASE("server: bad requests get 400 with an OpenAI error object, never a crash") {
  Fixture f;
  f.gen.context = 64;
  f.start();
  struct Case {
    const char* path;
    std::string body;
    const char* param;
    const char* code;
  };
  const std::vector<Case> cases = {
      {"/v1/completions", "{", "", "invalid_json"},
      {"/v1/completions", "[1,2]", "", "invalid_json"},
      {"/v1/completions", R"({"prompt":"x"})", "model", "missing_field"},
      {"/v1/completions", R"({"model":7,"prompt":"x"})", "model", "invalid_type"},
      {"/v1/completions", R"({"model":"other","prompt":"x"})", "model", "model_not_found"},
      {"/v1/completions", R"({"model":"fake"})", "prompt", "missing_field"},
      {"/v1/completions", R"({"model":"fake","prompt":5})", "prompt", "invalid_type"},
      {"/v1/completions", R"({"model":"fake","prompt":[1,-2]})", "prompt", "invalid_type"},
      {"/v1/completions", R"({"model":"fake","prompt":[1,99999]})", "prompt", "invalid_token"},
      {"/v1/completions", R"({"model":"fake","prompt":"x","max_tokens":"10"})", "max_tokens", "invalid_type"},
      {"/v1/completions", R"({"model":"fake","prompt":"x","max_tokens":0})", "max_tokens", "out_of_range"},
      {"/v1/completions", R"({"model":"fake","prompt":"x","temperature":5})", "temperature", "out_of_range"},
      {"/v1/completions", R"({"model":"fake","prompt":"x","stream":"yes"})", "stream", "invalid_type"},
      {"/v1/completions", R"({"model":"fake","prompt":"x","n":2})", "n", "out_of_range"},
      {"/v1/completions", R"({"model":"fake","prompt":"x","stop":[1]})", "stop", "invalid_type"},
      {"/v1/completions", R"({"model":"fake","prompt":")" + std::string(100, 'a') + R"("})", "prompt",
       "context_length_exceeded"},
      {"/v1/completions", R"({"model":"fake","prompt":"abc","max_tokens":61})", "max_tokens", "context_length_exceeded"},
      {"/v1/chat/completions", R"({"model":"fake"})", "messages", "missing_field"},
      {"/v1/chat/completions", R"({"model":"fake","messages":[]})", "messages", "invalid_value"},
      {"/v1/chat/completions", R"({"model":"fake","messages":["hi"]})", "messages[0]", "invalid_type"},
      {"/v1/chat/completions", R"({"model":"fake","messages":[{"role":"wizard","content":"x"}]})", "messages[0].role",
       "invalid_value"},
      {"/v1/chat/completions", R"({"model":"fake","messages":[{"role":"user"}]})", "messages[0].content", "missing_field"},
      {"/v1/chat/completions", R"({"model":"fake","messages":[{"role":"user","content":"x"}],"tools":{}})", "tools",
       "invalid_type"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.body);
    check_error(f.post(c.path, c.body), 400, c.param, c.code);
  }
  auto c = f.client();
  check_error(c.Get("/v1/nothing"), 404, "", "");
  // Judged from Content-Length before the body is read, so it counts as a bad request.
  check_error(f.post("/v1/completions", R"({"model":"fake","prompt":")" + std::string(70000, 'a') + "\"}"), 413, "", "body_too_large");
  // The server still serves after all that.
  auto ok = f.post("/v1/completions", R"({"model":"fake","prompt":"x","max_tokens":2})");
  REQUIRE(ok);
  CHECK(ok->status == 200);
  CHECK(f.server->stats().bad == cases.size() + 1);
}

TEST_CASE("server: an engine failure is 500 engine_error, or an error event mid-stream that the client reports") {
  Fixture f;
  f.gen.fail_after = 3;
  f.start();
  check_error(f.post("/v1/completions", R"({"model":"fake","prompt":"x"})"), 500, "", "engine_error");
  auto res = f.post("/v1/completions", R"({"model":"fake","prompt":"x","stream":true})");
  REQUIRE(res);
  CHECK(res->status == 200);  // the headers went out with the first token
  const auto data = sse_data(res->body);
  REQUIRE(data.size() == 3 + 1 + 1);  // 3 tokens, the error event, [DONE]
  const json err = json::parse(data[3]);
  CHECK(err["error"]["code"] == "engine_error");
  CHECK(err["error"]["message"] == "engine error: scripted failure after 3 tokens");
  CHECK(data[4] == "[DONE]");
  int failed = 2;
#if ATLAS_HAVE_CURL
  {
    ++failed;
    atlas::suites::endpoint::EndpointOptions eo;
    eo.url = "http://127.0.0.1:" + std::to_string(f.port) + "/v1";
    atlas::suites::endpoint::EndpointTarget target(eo);
    atlas::suites::TargetRequest req;
    req.prompt_text = "x";
    const auto r = target.generate(req);
    CHECK_FALSE(r.ok);
    CHECK(r.error == "server error in stream: engine error: scripted failure after 3 tokens");
    CHECK(r.token_t_ns.size() == 3);  // what arrived before the failure is kept
  }
#endif
  CHECK(f.server->stats().failed == failed);
  f.gen.fail_after = -1;  // the server keeps serving
  auto ok = f.post("/v1/completions", R"({"model":"fake","prompt":"x","max_tokens":2})");
  REQUIRE(ok);
  CHECK(ok->status == 200);
}

TEST_CASE("server: a chat template that raises answers 400 chat_template_error") {
  Fixture f;
  f.opts.chat_template = "{{ raise_exception('system messages are not supported') }}";
  f.start();
  auto res = f.post("/v1/chat/completions", R"({"model":"fake","messages":[{"role":"user","content":"x"}]})");
  check_error(res, 400, "messages", "chat_template_error");
  CHECK(json::parse(res->body)["error"]["message"].get<std::string>().find("system messages are not supported") !=
        std::string::npos);
}

TEST_CASE("server: beyond the queue limit requests get 429 at once") {
  Fixture f(/*queue_limit=*/1);
  f.gen.reply = "0123456789";
  f.gen.token_delay = std::chrono::milliseconds(40);  // 400 ms per request
  f.start();
  std::vector<std::future<int>> results;
  for (int i = 0; i < 4; ++i) {
    results.push_back(std::async(std::launch::async, [&f] {
      auto r = f.post("/v1/completions", R"({"model":"fake","prompt":"x"})");
      return r ? r->status : -1;
    }));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  int ok = 0, busy = 0;
  for (auto& r : results) {
    const int s = r.get();
    ok += s == 200;
    busy += s == 429;
  }
  CHECK(ok == 2);    // one decoding, one queued
  CHECK(busy == 2);  // refused
  CHECK(f.server->stats().rejected == 2);
  auto after = f.post("/v1/completions", R"({"model":"fake","prompt":"x","max_tokens":1})");
  REQUIRE(after);
  CHECK(after->status == 200);  // the queue drained
}

TEST_CASE("server: stop() drains an in-flight stream, refuses new requests with 503, then closes") {
  Fixture f;
  f.gen.reply = "0123456789";
  f.gen.token_delay = std::chrono::milliseconds(30);
  f.start();
  auto inflight = std::async(std::launch::async, [&f] {
    return f.post("/v1/completions", R"({"model":"fake","prompt":"x","stream":true})");
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(80));  // the stream is under way
  auto stopping = std::async(std::launch::async, [&f] { f.server->stop(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  check_error(f.post("/v1/completions", R"({"model":"fake","prompt":"x"})"), 503, "", "draining");
  auto h = f.client().Get("/health");
  REQUIRE(h);
  CHECK(h->status == 503);
  stopping.get();
  auto res = inflight.get();
  REQUIRE(res);
  CHECK(res->status == 200);
  const auto data = sse_data(res->body);
  REQUIRE(!data.empty());
  CHECK(data.back() == "[DONE]");
  std::string text;
  for (const auto& d : data) {
    if (d != "[DONE]") text += json::parse(d)["choices"][0]["text"].get<std::string>();
  }
  CHECK(text == "0123456789");
  auto gone = f.client().Get("/health");
  CHECK(!gone);  // the listener is closed
}

TEST_CASE("server: binding a port in use is a ServerError naming it") {
  Fixture a;
  a.start();
  Fixture b;
  b.opts.port = a.port;
  b.server = std::make_unique<Server>(b.gen, b.opts);
  const std::string port = std::to_string(a.port);
  CHECK_THROWS_WITH_AS(b.server->start(), doctest::Contains(port.c_str()), atlas::server::ServerError);
}

#endif
