// The endpoint client against the stream shapes of vLLM, SGLang, TRT-LLM and llama.cpp
// (tests/endpoint/fixtures/, written from their documented formats), and against how those
// servers describe themselves: context length, prefix-cache reset, token ids.
#if ATLAS_HAVE_CURL && ATLAS_HAVE_HTTPLIB

#include "common/build_paths.hpp"
#include <fstream>
#include <sstream>

#include <doctest/doctest.h>

#include "engine/model.hpp"
#include "suites/cold_request.hpp"
#include "suites/endpoint/endpoint_target.hpp"
#include "tests/server/fake_generator.hpp"
#include "tests/test_data.hpp"
#include "suites/latency.hpp"
#include "tests/endpoint/script_server.hpp"

using namespace atlas::suites::endpoint;
using atlas::suites::TargetRequest;
using atlas::suites::TargetResponse;
using atlas::test::completion_event;
using atlas::test::ScriptServer;
using atlas::test::ScriptStep;
using nlohmann::json;
using std::chrono::milliseconds;

namespace {

EndpointOptions opts(const std::string& url) {
  EndpointOptions o;
  o.url = url;
  o.timeouts.connect = milliseconds(2000);
  o.timeouts.first_byte = milliseconds(5000);
  o.timeouts.idle = milliseconds(5000);
  o.timeouts.total = milliseconds(20000);
  return o;
}

/// The events of a transcript, each as one write 3 ms after the previous.
std::vector<ScriptStep> transcript(const std::string& name) {
  std::ifstream in(std::string(ATLAS_SOURCE_DIR) + "/tests/endpoint/fixtures/" + name);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string all = ss.str();
  std::vector<ScriptStep> steps;
  std::size_t pos = 0;
  while (pos < all.size()) {
    const std::size_t end = all.find("\n\n", pos);
    const std::string ev = all.substr(pos, end == std::string::npos ? std::string::npos : end + 2 - pos);
    if (ev.find("data:") != std::string::npos) steps.push_back({milliseconds(3), ev});
    if (end == std::string::npos) break;
    pos = end + 2;
  }
  return steps;
}

TargetResponse replay(const std::string& file, const json& models = nullptr, bool chat = false) {
  ScriptServer s;
  if (!models.is_null()) s.models = models;
  s.script = transcript(file);
  s.start();
  EndpointTarget t(opts(s.url()));
  TargetRequest r;
  r.prompt_ids = {1, 450};
  r.max_new_tokens = 3;
  r.return_token_ids = true;
  if (chat) r.messages = json::array({{{"role", "user"}, {"content", "hi"}}});
  return t.generate(r);
}

void check_common(const TargetResponse& r, int cached) {
  INFO(r.error);
  REQUIRE(r.ok);
  CHECK(r.text == " Once upon a");
  CHECK(r.prompt_tokens == 2);
  CHECK(r.completion_tokens == 3);
  CHECK(r.cached_tokens == cached);
  CHECK(r.prefilled_tokens == 2 - cached);
  CHECK(r.finish_reason == "length");
  REQUIRE(r.token_t_ns.size() == 3);
}

json owned_by(const std::string& owner, json extra = json::object()) {
  json m = {{"id", "m"}, {"object", "model"}, {"owned_by", owner}};
  m.update(extra);
  return {{"object", "list"}, {"data", json::array({m})}};
}

}  // namespace

TEST_CASE("server shapes: vLLM completions with return_token_ids: ids per chunk, cached tokens from the usage chunk") {
  const TargetResponse r = replay("vllm-completions.sse", owned_by("vllm", {{"max_model_len", 4096}}));
  check_common(r, 1);
  CHECK(r.output_ids == std::vector<int>{9038, 2501, 263});
  CHECK(r.token_count_source == "server token ids (= server usage)");
  CHECK(r.server_timings.is_null());
}

TEST_CASE("server shapes: vLLM continuous usage stats place two tokens on the chunk that carried two") {
  const TargetResponse r = replay("vllm-continuous-usage.sse", owned_by("vllm", {{"max_model_len", 4096}}));
  check_common(r, 1);
  CHECK(r.output_ids.empty());
  CHECK(r.token_count_source == "server usage per chunk (= server usage)");
  // " upon a" is 2 tokens of the second chunk: they share its arrival after the first read.
  CHECK(r.token_t_ns[1] > r.token_t_ns[0]);
  CHECK(r.token_t_ns[2] > r.token_t_ns[1]);
}

TEST_CASE("server shapes: vLLM chat: the role chunk is not a token; ids and usage are read") {
  const TargetResponse r = replay("vllm-chat.sse", owned_by("vllm", {{"max_model_len", 4096}}), true);
  check_common(r, 1);
  CHECK(r.output_ids == std::vector<int>{9038, 2501, 263});
}

TEST_CASE("server shapes: SGLang: no ids, one chunk with two tokens, counts from usage") {
  const TargetResponse r = replay("sglang-completions.sse", owned_by("sglang", {{"max_model_len", 4096}}));
  check_common(r, 1);
  CHECK(r.output_ids.empty());
  CHECK(r.token_count_source == "one per chunk, scaled to server usage");
}

TEST_CASE("server shapes: TRT-LLM: no ids, no cached tokens") {
  const TargetResponse r = replay("trtllm-completions.sse", owned_by("tensorrt_llm"));
  check_common(r, 0);
  CHECK(r.output_ids.empty());
}

TEST_CASE("server shapes: TRT-LLM, recent releases: cached tokens in usage.prompt_tokens_details") {
  // Recent trtllm-serve UsageInfo carries prompt_tokens_details (its openai_protocol.py).
  const TargetResponse r = replay("trtllm-completions-cached.sse", owned_by("tensorrt_llm"));
  check_common(r, 1);
  CHECK(r.output_ids.empty());
}

TEST_CASE("server shapes: llama.cpp: ids from logprobs, usage on the finish chunk, the server's timings kept") {
  const TargetResponse r = replay("llamacpp-completions.sse", owned_by("llamacpp", {{"meta", {{"n_ctx", 512}, {"n_ctx_train", 2048}}}}));
  check_common(r, 1);
  CHECK(r.output_ids == std::vector<int>{9038, 2501, 263});
  REQUIRE(r.server_timings.is_object());
  CHECK(r.server_timings["prompt_ms"] == 0.52);
  CHECK(r.server_timings["cache_n"] == 1);
}

TEST_CASE("server shapes: llama.cpp's empty-text chunk is a token where its timings say so: TTFT at the first token") {
  // A first token whose text llama-server holds back (it may start a stop string: checked
  // against llama-server b9793) streams as "text": ""; timings_per_token's predicted_n counts
  // it. Counted from the text, TTFT would be the second chunk (3 ms later) and the four tokens
  // would spread over three chunks.
  ScriptServer s;
  s.models = owned_by("llamacpp", {{"meta", {{"n_ctx", 512}}}});
  s.script = transcript("llamacpp-completions-empty-text.sse");
  s.start();
  EndpointTarget t(opts(s.url()));
  TargetRequest q;
  q.prompt_ids = {1, 450};
  q.max_new_tokens = 4;
  CHECK(t.request_body(q)["timings_per_token"] == true);  // asked of llama.cpp only
  const TargetResponse r = t.generate(q);
  INFO(r.error);
  REQUIRE(r.ok);
  CHECK(r.text == "\xC3\xA9 upon a");
  CHECK(r.completion_tokens == 4);
  CHECK(r.token_count_source == "server timings per chunk (= server usage)");
  REQUIRE(r.token_t_ns.size() == 4);
  const auto writes = s.write_ns();
  REQUIRE(writes.size() == 1);
  CHECK(r.token_t_ns[0] >= writes[0][0]);
  CHECK(r.token_t_ns[0] < writes[0][1]);  // the first chunk, not the first visible character
  for (int i = 1; i < 4; ++i) CHECK(r.token_t_ns[i] >= writes[0][i]);
  REQUIRE(r.server_timings.is_object());
  CHECK(r.server_timings["predicted_n"] == 4);  // the finish chunk's timings are kept
  ScriptServer v;
  v.models = owned_by("vllm", {{"max_model_len", 64}});
  v.start();
  CHECK_FALSE(EndpointTarget(opts(v.url())).request_body(q).contains("timings_per_token"));
}

TEST_CASE("server shapes: llama.cpp tokens it never streamed are counted at its finish chunk: TTFT defined, 3 tokens") {
  // Captured from llama-server (b9793): three tokens that complete no UTF-8 character (byte
  // 0xC3 three times) are held back, the incomplete bytes dropped at the end, so the reply is
  // one finish chunk with "text": "" and predicted_n 3. The request had failed with "no token
  // timestamps (no token generated)" although the server generated 3.
  ScriptServer s;
  s.models = owned_by("llamacpp", {{"meta", {{"n_ctx", 512}}}});
  s.script = transcript("llamacpp-completions-held-back.sse");
  s.start();
  EndpointTarget t(opts(s.url()));
  TargetRequest q;
  q.prompt_ids = {1, 403, 407};
  q.max_new_tokens = 3;
  const TargetResponse r = t.generate(q);
  INFO(r.error);
  REQUIRE(r.ok);
  CHECK(r.text.empty());
  CHECK(r.completion_tokens == 3);
  CHECK(r.token_count_source == "server count on the finish chunk, no token streamed before it (= server usage)");
  REQUIRE(r.token_t_ns.size() == 3);
  const auto writes = s.write_ns();
  REQUIRE(writes.size() == 1);
  for (auto ts : r.token_t_ns) CHECK(ts >= writes[0][0]);  // all at the finish chunk
  CHECK(r.token_t_ns[0] == r.token_t_ns[2]);
  const auto lat = atlas::suites::compute_latency(r);
  CHECK(lat.output_tokens == 3);
  CHECK(lat.first_read_tokens == 3);
  CHECK_FALSE(lat.tpot_ms);  // no token has a time of its own after the first
  CHECK(lat.ttft_ms > 0);
}

TEST_CASE("server shapes: the request asks each server for ids and an exact length in its own fields") {
  const TargetRequest req = [] {
    TargetRequest r;
    r.prompt_ids = {1, 2};
    r.max_new_tokens = 5;
    r.ignore_eos = true;
    r.return_token_ids = true;
    return r;
  }();
  auto body_for = [&](const json& models) {
    ScriptServer s;
    s.models = models;
    s.start();
    return EndpointTarget(opts(s.url())).request_body(req);
  };
  const json v = body_for(owned_by("vllm", {{"max_model_len", 64}}));
  CHECK(v["return_token_ids"] == true);
  CHECK(v["min_tokens"] == 5);
  CHECK(v["ignore_eos"] == true);
  CHECK_FALSE(v.contains("logprobs"));
  const json l = body_for(owned_by("llamacpp", {{"meta", {{"n_ctx", 64}}}}));
  CHECK(l["logprobs"] == 1);
  CHECK_FALSE(l.contains("return_token_ids"));
  const json o = body_for(owned_by("someone"));
  CHECK_FALSE(o.contains("return_token_ids"));
  CHECK_FALSE(o.contains("logprobs"));
  CHECK_FALSE(l.contains("cache_prompt"));  // not a cold request: the server's cache stays usable
}

TEST_CASE("server shapes: llama.cpp makes a cold request cold by itself (cache_prompt: false): the prompt is sent unsalted") {
  ScriptServer s;
  s.reset_route = false;  // llama-server has no /reset_prefix_cache
  s.models = owned_by("llamacpp", {{"meta", {{"n_ctx", 64}}}});
  s.script = {{{}, completion_event("a")}, {{}, "data: [DONE]\n\n"}};
  s.start();
  EndpointOptions o = opts(s.url());
  o.tokenizer = std::make_shared<atlas::test::ByteTokenizer>();
  EndpointTarget t(o);
  CHECK(t.cold_salt() == 0);
  atlas::suites::ColdRequests cold(t);
  TargetRequest base;
  base.prompt_ids = {1, 10, 11, 12, 13, 14};
  base.max_new_tokens = 1;
  const TargetResponse r = cold.send(
      [&](std::uint64_t salt) {
        TargetRequest q = base;
        q.prompt_ids = cold.salted_ids(base.prompt_ids, salt, 64);
        return q;
      },
      "test");
  REQUIRE(r.ok);
  CHECK(cold.salted() == 0);
  CHECK(s.reset_calls == 1);
  const auto bodies = s.bodies();
  REQUIRE(bodies.size() == 1);
  const json b = json::parse(bodies[0]);
  CHECK(b["cache_prompt"] == false);
  CHECK(b["prompt"] == json(base.prompt_ids));
  // Other servers do not know the field (TRT-LLM refuses unknown fields): never sent to them.
  ScriptServer v;
  v.models = owned_by("vllm", {{"max_model_len", 64}});
  v.start();
  TargetRequest c = base;
  c.cold = true;
  CHECK_FALSE(EndpointTarget(opts(v.url())).request_body(c).contains("cache_prompt"));
}

TEST_CASE("server shapes: a /models entry whose id is not a string is skipped, not an uncaught type_error") {
  // Found reviewing json::value() calls after fuzz_tokenizer_json's type_error finding.
  ScriptServer s;
  s.models = {{"object", "list"},
              {"data", json::array({{{"id", 5}, {"owned_by", "sglang"}}, {{"id", "m"}, {"owned_by", "vllm"}, {"max_model_len", 64}}})}};
  s.start();
  auto o = opts(s.url());
  o.served_model = "m";
  EndpointTarget t(o);
  CHECK(t.server_kind() == "vllm");
  CHECK(t.context_length() == 64);
}

TEST_CASE("server shapes: the context length comes from max_model_len, llama.cpp's meta.n_ctx or /props, or the option") {
  {
    ScriptServer s;  // llama.cpp today: per-slot context in meta.n_ctx (n_ctx_train is the model's)
    s.models = owned_by("llamacpp", {{"meta", {{"n_ctx", 256}, {"n_ctx_train", 2048}}}});
    s.start();
    EndpointTarget t(opts(s.url()));
    CHECK(t.context_length() == 256);
    CHECK(t.context_length_source() == "meta.n_ctx");
    CHECK(t.server_kind() == "llamacpp");
  }
  {
    ScriptServer s;  // older llama.cpp: only n_ctx_train in /v1/models, the slot context in /props
    s.models = owned_by("llamacpp", {{"meta", {{"n_ctx_train", 2048}}}});
    s.props = {{"default_generation_settings", {{"n_ctx", 512}}}, {"total_slots", 1}};
    s.start();
    EndpointTarget t(opts(s.url()));
    CHECK(t.context_length() == 512);
    CHECK(t.context_length_source() == "props");
  }
  {
    ScriptServer s;  // TRT-LLM-like: nothing reported; the option decides
    s.models = owned_by("tensorrt_llm");
    s.start();
    CHECK(EndpointTarget(opts(s.url())).context_length() == 0);
    auto o = opts(s.url());
    o.context_length = 1024;
    EndpointTarget t(o);
    CHECK(t.context_length() == 1024);
    CHECK(t.context_length_source() == "option");
  }
}

TEST_CASE("server shapes: a server without /reset_prefix_cache is asked once; cold requests are then salted") {
  ScriptServer s;
  s.reset_route = false;
  s.script = {{{}, completion_event("a")}, {{}, "data: [DONE]\n\n"}};
  s.start();
  EndpointTarget t(opts(s.url()));
  CHECK(t.cold_salt() != 0);  // before any reset: unknown, so salted
  TargetRequest r;
  r.prompt_ids = {1, 2, 3};
  r.reuse_prefix = false;
  for (int i = 0; i < 3; ++i) REQUIRE(t.generate(r).ok);
  t.reset_session();
  CHECK(s.reset_calls == 1);
  CHECK(t.cold_salt() != 0);
  const json p = t.provenance();
  CHECK(p["reset_prefix_cache_calls"] == 4);
  CHECK(p["reset_prefix_cache_skipped"] == 3);
  CHECK(p["reset_prefix_cache"].get<std::string>().rfind("unsupported (HTTP 404)", 0) == 0);

  ScriptServer with_reset;  // vLLM / atlas-serve: a reset that works leaves prompts unsalted
  with_reset.start();
  EndpointTarget v(opts(with_reset.url()));
  v.reset_session();
  CHECK(with_reset.reset_calls == 1);
  CHECK(v.cold_salt() == 0);
}

TEST_CASE("endpoint: events that come in one read share its gap; no zero ITL, TPOT = 1 / tok/s = mean ITL") {
  ScriptServer s;
  s.script = {{milliseconds(5), completion_event("a")},
              // three events written at once: the client reads them together
              {milliseconds(30), completion_event("b") + completion_event("c") + completion_event("d")},
              {milliseconds(30), completion_event("e")},
              {{}, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":5}}\n\n"},
              {{}, "data: [DONE]\n\n"}};
  s.start();
  EndpointTarget t(opts(s.url()));
  TargetRequest req;
  req.prompt_ids = {1, 2, 3};
  const TargetResponse r = t.generate(req);
  REQUIRE(r.ok);
  REQUIRE(r.token_t_ns.size() == 5);
  const auto lat = atlas::suites::compute_latency(r);
  REQUIRE(lat.itl_ms.size() == 4);
  for (double g : lat.itl_ms) CHECK(g > 5.0);  // ~10, 10, 10, 30 ms; never 0
  REQUIRE(lat.tpot_ms);
  REQUIRE(lat.decode_tok_s);
  double sum = 0;
  for (double g : lat.itl_ms) sum += g;
  CHECK(*lat.tpot_ms == doctest::Approx(sum / 4));
  CHECK(*lat.decode_tok_s == doctest::Approx(1000.0 / *lat.tpot_ms));
}

TEST_CASE("endpoint: without usage, a local tokenizer counts the stream's tokens, not each chunk's own encoding") {
  // A sentencepiece tokenizer encodes a chunk on its own with a leading-space token: counted per chunk,
  // 4 tokens counted as 8 (and TPOT halved). The growth of the whole text's encoding is exact.
  atlas::test::require_data(atlas::test::stories_bin());
  atlas::engine::LoadOptions lo;
  lo.tokenizer_path = atlas::test::stories_tok();
  const auto model = atlas::engine::load_model(atlas::test::stories_bin(), lo);
  const std::vector<int> ids = model.tokenizer->encode("Once upon a time there was", false);
  ScriptServer s;
  s.script.push_back({milliseconds(2), "data: {\"choices\":[{\"index\":0,\"text\":\"\"}]}\n\n"});
  int prev = -1;
  for (int id : ids) {
    s.script.push_back({milliseconds(3), completion_event(model.tokenizer->token_bytes(prev, id))});
    prev = id;
  }
  s.script.push_back({{}, "data: [DONE]\n\n"});
  s.start();
  auto o = opts(s.url());
  o.tokenizer = model.tokenizer;
  EndpointTarget t(o);
  TargetRequest req;
  req.prompt_ids = {1, 2};
  const TargetResponse r = t.generate(req);
  REQUIRE(r.ok);
  CHECK(r.completion_tokens == static_cast<int>(ids.size()));
  CHECK(r.token_t_ns.size() == ids.size());
  CHECK(r.token_count_source == "local tokenizer");
}

#endif
