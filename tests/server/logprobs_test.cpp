// logprobs / top_logprobs in process over the FakeGenerator (scripted log-probabilities): the
// completions and chat shapes, streaming and not, the 400s of the request fields, and a
// backend that does not compute them. The values against a real model: serve_options_test.cpp.
#if ATLAS_HAVE_HTTPLIB
#include <tuple>

#include <doctest/doctest.h>
#include <httplib.h>

#include "tests/server/served_fake.hpp"

using nlohmann::json;

namespace {
const json kCompletion = {{"model", "fake"}, {"prompt", "Once"}, {"max_tokens", 5}};
const json kChat = {{"model", "fake"}, {"messages", json::array({{{"role", "user"}, {"content", "hi"}}})}, {"max_tokens", 5}};

json ok_body(const httplib::Result& r) {
  REQUIRE(r);
  REQUIRE_MESSAGE(r->status == 200, r->body);
  return json::parse(r->body);
}
}  // namespace

TEST_CASE("logprobs: completions shape (tokens, token_logprobs, top_logprobs with the chosen one, text_offset)") {
  atlas::test::ServedFake f;  // replies "Hello world"; token i has logprob -(i + 1) / 4
  f.gen.logprobs_supported = true;
  f.start();
  json q = kCompletion;
  q["logprobs"] = 2;
  const json lp = ok_body(f.post("/v1/completions", q))["choices"][0]["logprobs"];
  CHECK(lp["tokens"] == json({"H", "e", "l", "l", "o"}));
  CHECK(lp["token_logprobs"] == json({-0.25, -0.5, -0.75, -1.0, -1.25}));
  CHECK(lp["text_offset"] == json({0, 1, 2, 3, 4}));
  REQUIRE(lp["top_logprobs"].size() == 5);
  // The 2 alternatives (ids + 1, + 2: "I", "J") and the chosen "H".
  CHECK(lp["top_logprobs"][0] == json({{"H", -0.25}, {"I", -1.25}, {"J", -2.25}}));
  q["logprobs"] = 0;  // no alternatives: the chosen token alone
  CHECK(ok_body(f.post("/v1/completions", q))["choices"][0]["logprobs"]["top_logprobs"][1] == json({{"e", -0.5}}));
  q["return_tokens_as_token_ids"] = true;
  CHECK(ok_body(f.post("/v1/completions", q))["choices"][0]["logprobs"]["tokens"][0] == "token_id:75");
  // Not asked: null, as before.
  CHECK(ok_body(f.post("/v1/completions", kCompletion))["choices"][0]["logprobs"].is_null());
  json off = kCompletion;
  off["logprobs"] = nullptr;
  CHECK(ok_body(f.post("/v1/completions", off))["choices"][0]["logprobs"].is_null());
  off["logprobs"] = false;
  CHECK(ok_body(f.post("/v1/completions", off))["choices"][0]["logprobs"].is_null());
}

TEST_CASE("logprobs: chat shape (content[] with token, logprob, bytes, id, top_logprobs), streamed the same") {
  atlas::test::ServedFake f;
  f.gen.logprobs_supported = true;
  f.gen.reply = "h\xc3\xa9!";  // 'é' is two byte tokens: neither is valid UTF-8 alone
  f.start();
  json q = kChat;
  q["logprobs"] = true;
  q["top_logprobs"] = 1;
  const json body = ok_body(f.post("/v1/chat/completions", q));
  CHECK(body["choices"][0]["message"]["content"] == "h\xc3\xa9!");
  const json content = body["choices"][0]["logprobs"]["content"];
  REQUIRE(content.size() == 4);
  CHECK(content[0] == json({{"token", "h"}, {"logprob", -0.25}, {"bytes", {104}}, {"id", 107},
                            {"top_logprobs", {{{"token", "i"}, {"logprob", -1.25}, {"bytes", {105}}, {"id", 108}}}}}));
  CHECK(content[1]["token"] == "bytes:\\xc3");
  CHECK(content[1]["bytes"] == json({0xc3}));
  CHECK(content[2]["token"] == "bytes:\\xa9");
  CHECK(body["choices"][0]["logprobs"]["refusal"].is_null());
  q["top_logprobs"] = 0;
  CHECK(ok_body(f.post("/v1/chat/completions", q))["choices"][0]["logprobs"]["content"][0]["top_logprobs"] == json::array());

  // Streaming: every token's entry arrives once, on the chunk that carries its text or the next
  // one (the first byte of 'é' is held back until the second completes it).
  q["stream"] = true;
  q["top_logprobs"] = 1;
  auto r = f.post("/v1/chat/completions", q);
  REQUIRE(r);
  json streamed = json::array();
  int role_chunks = 0;
  for (const json& c : atlas::test::sse_json(r->body)) {
    if (c["choices"].empty()) continue;
    const json& ch = c["choices"][0];
    if (ch["delta"].contains("role")) {
      ++role_chunks;
      CHECK(ch["logprobs"].is_null());
      continue;
    }
    if (ch["logprobs"].is_null()) continue;
    for (const json& e : ch["logprobs"]["content"]) streamed.push_back(e);
  }
  CHECK(role_chunks == 1);
  CHECK(streamed == content);
}

TEST_CASE("logprobs: streamed completions list every token once, offsets continuing across chunks") {
  atlas::test::ServedFake f;
  f.gen.logprobs_supported = true;
  f.start();
  json q = kCompletion;
  q["logprobs"] = 1;
  q["stream"] = true;
  q["stop"] = "o";  // "Hell" then the stop: 'o' is generated, scanned and cut from the text
  auto r = f.post("/v1/completions", q);
  REQUIRE(r);
  std::vector<std::string> tokens;
  std::vector<int> offsets;
  std::string text;
  for (const json& c : atlas::test::sse_json(r->body)) {
    if (c["choices"].empty()) continue;
    text += c["choices"][0]["text"].get<std::string>();
    const json& lp = c["choices"][0]["logprobs"];
    if (lp.is_null()) continue;
    for (std::size_t i = 0; i < lp["tokens"].size(); ++i) {
      tokens.push_back(lp["tokens"][i]);
      offsets.push_back(lp["text_offset"][i]);
    }
  }
  CHECK(text == "Hell");
  CHECK(tokens == std::vector<std::string>{"H", "e", "l", "l", "o"});  // the token that stopped it is counted and listed
  CHECK(offsets == std::vector<int>{0, 1, 2, 3, 4});
}

TEST_CASE("logprobs: request fields out of range are 400 naming them; a backend without logprobs is 400 naming it") {
  atlas::test::ServedFake f;
  f.gen.logprobs_supported = true;
  f.start();
  for (const auto& [path, field, value, needle] : std::vector<std::tuple<std::string, std::string, json, std::string>>{
           {"/v1/completions", "logprobs", 21, "'logprobs' must be in [0, 20], got 21"},
           {"/v1/completions", "logprobs", -1, "'logprobs' must be in [0, 20], got -1"},
           {"/v1/completions", "logprobs", true, "'logprobs' must be an integer (alternatives per token, 0-20) or null, got boolean true"},
           {"/v1/completions", "top_logprobs", 3, "top_logprobs=3 (on /v1/completions use logprobs: N)"},
           {"/v1/chat/completions", "logprobs", 2, "'logprobs' must be a boolean, got integer 2"},
           {"/v1/chat/completions", "top_logprobs", 3, "'top_logprobs' (3) needs 'logprobs': true"},
           {"/v1/chat/completions", "top_logprobs", 21, "'top_logprobs' must be in [0, 20], got 21"},
           {"/v1/completions", "return_tokens_as_token_ids", "yes", "must be a boolean"}}) {
    json q = path == "/v1/completions" ? kCompletion : kChat;
    q[field] = value;
    if (field == "top_logprobs" && value == 21) q["logprobs"] = true;
    auto r = f.post(path, q);
    REQUIRE(r);
    INFO(path << " " << field << "=" << value.dump());
    CHECK(r->status == 400);
    const json e = json::parse(r->body)["error"];
    CHECK(e["param"] == field);
    CHECK(e["message"].get<std::string>().find(needle) != std::string::npos);
  }
  CHECK(f.gen.generate_calls == 0);

  atlas::test::ServedFake g;  // a backend that does not compute them (as the CUDA one, for now)
  g.gen.backend = "cuda";
  g.start();
  json cq = kCompletion, sq = kChat;
  cq["logprobs"] = 1;
  sq["logprobs"] = true;
  sq["stream"] = true;
  for (const auto& [path, q] : std::vector<std::pair<std::string, json>>{{"/v1/completions", cq}, {"/v1/chat/completions", sq}}) {
    auto r = g.post(path, q);
    REQUIRE(r);
    INFO(path);
    CHECK(r->status == 400);
    const json e = json::parse(r->body)["error"];
    CHECK(e["param"] == "logprobs");
    CHECK(e["code"] == "unsupported_value");
    CHECK(e["message"] == "'logprobs' is not supported by the cuda backend this server decodes with");
  }
  CHECK(g.gen.generate_calls == 0);
  json off = kChat;
  off["logprobs"] = false;
  off["top_logprobs"] = 0;
  CHECK(ok_body(g.post("/v1/chat/completions", off))["choices"][0]["logprobs"].is_null());
}
#endif
