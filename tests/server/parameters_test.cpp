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

TEST_CASE("parameters: logprobs are refused until the engine computes them; min_tokens only where ignore_eos meets it") {
  Served f;
  f.start();
  for (const auto& [path, field, value] : std::vector<std::tuple<std::string, std::string, json>>{
           {"/v1/completions", "logprobs", 1}, {"/v1/completions", "logprobs", 0}, {"/v1/chat/completions", "logprobs", true},
           {"/v1/chat/completions", "top_logprobs", 2}}) {
    json q = path == "/v1/completions" ? kCompletion : kChat;
    q[field] = value;
    auto r = f.post(path, q);
    REQUIRE(r);
    INFO(path << " " << field);
    CHECK(r->status == 400);
    CHECK(json::parse(r->body)["error"]["param"] == field);
  }
  json chat_off = kChat;
  chat_off["logprobs"] = false;
  CHECK(f.post("/v1/chat/completions", chat_off)->status == 200);
  // The endpoint client's load request: ignore_eos with min_tokens = max_tokens is met exactly.
  json m = kCompletion;
  m["max_tokens"] = 20;
  m["min_tokens"] = 20;
  CHECK(f.post("/v1/completions", m)->status == 400);  // without ignore_eos EOS could end it at 11
  m["ignore_eos"] = true;
  auto r = f.post("/v1/completions", m);
  REQUIRE(r->status == 200);
  CHECK(json::parse(r->body)["usage"]["completion_tokens"] == 20);
  m["stop"] = "world";
  CHECK(f.post("/v1/completions", m)->status == 400);
  m.erase("stop");
  m["min_tokens"] = 0;
  m.erase("ignore_eos");
  CHECK(f.post("/v1/completions", m)->status == 200);
}

#endif
