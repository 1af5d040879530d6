// Request parameters the server does not implement, in process over the FakeGenerator: a 400
// naming every one given (instead of an answer as if it were absent); their "off" values pass.
#if ATLAS_HAVE_HTTPLIB
#include <csignal>
#include <tuple>

#include <doctest/doctest.h>
#include <httplib.h>

#include "server/server.hpp"
#include "tests/server/served_fake.hpp"

using nlohmann::json;

namespace {
using Served = atlas::test::ServedFake;

const json kCompletion = {{"model", "fake"}, {"prompt", "Once"}, {"max_tokens", 50}};
const json kChat = {{"model", "fake"}, {"messages", json::array({{{"role", "user"}, {"content", "hi"}}})}, {"max_tokens", 50}};
}  // namespace

TEST_CASE("parameters: known but unsupported parameters are 400 unsupported_value, all of them named; their off values pass") {
  Served f;
  f.start();
  json bad = kCompletion;
  bad["echo"] = true;
  bad["best_of"] = 3;
  bad["presence_penalty"] = 0.5;
  bad["frequency_penalty"] = -1;
  bad["response_format"] = {{"type", "json_object"}};
  auto r = f.post("/v1/completions", bad);
  REQUIRE(r);
  CHECK(r->status == 400);
  const json e = json::parse(r->body)["error"];
  CHECK(e["code"] == "unsupported_value");
  CHECK(e["param"] == "echo");
  const std::string msg = e["message"];
  for (const char* name : {"echo=true", "best_of=3", "presence_penalty=0.5", "frequency_penalty=-1", "response_format="}) {
    INFO(name);
    CHECK(msg.find(name) != std::string::npos);
  }
  for (const auto& [name, value] : std::vector<std::pair<std::string, json>>{{"repetition_penalty", 1.2}, {"min_p", 0.1}, {"suffix", "x"},
                                                                              {"stop_token_ids", {5}}, {"guided_json", json::object()},
                                                                              {"prompt_logprobs", 1}}) {
    json one = kCompletion;
    one[name] = value;
    auto x = f.post("/v1/completions", one);
    REQUIRE(x);
    INFO(name);
    CHECK(x->status == 400);
    CHECK(json::parse(x->body)["error"]["param"] == name);
  }
  json off = kChat;
  off["echo"] = false;
  off["best_of"] = 1;
  off["presence_penalty"] = 0;
  off["frequency_penalty"] = 0.0;
  off["response_format"] = {{"type", "text"}};
  off["stop_token_ids"] = json::array();
  off["user"] = "someone";  // unknown fields are still ignored
  auto ok = f.post("/v1/chat/completions", off);
  REQUIRE(ok);
  CHECK(ok->status == 200);
  CHECK(f.gen.generate_calls == 1);
}

TEST_CASE("parameters: min_tokens holds back EOS and stop strings; ranges are 400 naming field and value") {
  Served f;  // replies "Hello world", then EOS, then 'x' forever
  f.start();
  auto body = [](const httplib::Result& r) {
    REQUIRE(r);
    REQUIRE(r->status == 200);
    return json::parse(r->body);
  };
  json m = kCompletion;
  m["max_tokens"] = 20;
  json j = body(f.post("/v1/completions", m));
  CHECK(j["usage"]["completion_tokens"] == 11);  // EOS after "Hello world"
  CHECK(j["choices"][0]["finish_reason"] == "stop");
  m["min_tokens"] = 15;  // EOS at 11 is not honoured: 15 or more, here to max_tokens
  j = body(f.post("/v1/completions", m));
  CHECK(j["usage"]["completion_tokens"] == 20);
  CHECK(j["choices"][0]["finish_reason"] == "length");
  m["min_tokens"] = 20;  // the endpoint client's load request: min = max, with ignore_eos
  m["ignore_eos"] = true;
  CHECK(body(f.post("/v1/completions", m))["usage"]["completion_tokens"] == 20);
  m.erase("min_tokens");
  CHECK(body(f.post("/v1/completions", m))["usage"]["completion_tokens"] == 20);  // ignore_eos alone decodes to max_tokens
  // Stop strings: looked for only in the text after the first min_tokens tokens.
  json s = kCompletion;
  s["stop"] = "l";
  CHECK(body(f.post("/v1/completions", s))["choices"][0]["text"] == "He");
  s["min_tokens"] = 5;  // "Hello" goes out as it is; " world" is scanned: its 'l' stops it
  j = body(f.post("/v1/completions", s));
  CHECK(j["choices"][0]["text"] == "Hello wor");
  CHECK(j["choices"][0]["finish_reason"] == "stop");
  s["stream"] = true;
  auto st = f.post("/v1/completions", s);
  REQUIRE(st);
  std::string streamed;
  for (const json& c : atlas::test::sse_json(st->body)) {
    if (!c["choices"].empty()) streamed += c["choices"][0]["text"].get<std::string>();
  }
  CHECK(streamed == "Hello wor");

  const int calls = f.gen.generate_calls;
  for (const auto& [field, value, needle] : std::vector<std::tuple<std::string, json, std::string>>{
           {"min_tokens", 51, "'min_tokens' (51) must not exceed max_tokens (50)"},
           {"min_tokens", -1, "'min_tokens' must be in [0, 1073741824], got -1"},
           {"min_tokens", "3", "'min_tokens' must be an integer, got string"},
           {"ignore_eos", 1, "'ignore_eos' must be a boolean, got integer 1"}}) {
    json q = kCompletion;
    q[field] = value;
    auto r = f.post("/v1/completions", q);
    REQUIRE(r);
    INFO(field << " " << value.dump());
    CHECK(r->status == 400);
    const json e = json::parse(r->body)["error"];
    CHECK(e["param"] == field);
    CHECK(e["message"].get<std::string>().find(needle) != std::string::npos);
  }
  // Without max_tokens the bound is what the context leaves (512 - 5 prompt tokens: BOS and "Once").
  json ctx = kCompletion;
  ctx.erase("max_tokens");
  ctx["min_tokens"] = 508;
  auto r = f.post("/v1/completions", ctx);
  REQUIRE(r);
  CHECK(r->status == 400);
  CHECK(json::parse(r->body)["error"]["param"] == "min_tokens");
  CHECK(json::parse(r->body)["error"]["message"].get<std::string>().find("exceeds the 507 tokens") != std::string::npos);
  CHECK(f.gen.generate_calls == calls);  // refused before decoding
}

#endif
