#include <doctest/doctest.h>

#include "suites/endpoint/openai_stream.hpp"
#include "suites/endpoint/stream_timing.hpp"

using namespace atlas::suites::endpoint;

namespace {
void feed(OpenAiStreamReader& r, const std::string& data, std::int64_t t) { r.on_event({"", data}, t); }
}  // namespace

TEST_CASE("stream reader: a role-only or empty first chat chunk is not a token; usage-only chunk is not either") {
  OpenAiStreamReader r;
  feed(r, R"({"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]})", 100);
  feed(r, R"({"choices":[{"index":0,"delta":{"content":""}}]})", 150);
  feed(r, R"({"choices":[{"index":0,"delta":{"content":"Hel"}}]})", 200);
  feed(r, R"({"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":null}]})", 300);
  feed(r, R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})", 310);
  feed(r, R"({"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":4}}})", 400);
  feed(r, "[DONE]", 410);
  CHECK(r.error().empty());
  CHECK(r.done());
  CHECK(r.text() == "Hello");
  REQUIRE(r.chunks().size() == 2);
  CHECK(r.chunks()[0].t_ns == 200);
  CHECK(r.chunks()[1].t_ns == 300);
  CHECK(r.finish_reason() == "stop");
  REQUIRE(r.usage());
  CHECK(r.usage()->prompt_tokens == 5);
  CHECK(r.usage()->completion_tokens == 3);
  CHECK(r.usage()->cached_tokens == 4);
}

TEST_CASE("stream reader: an empty-text chunk is a token when the server's count grew; a final usage alone is not") {
  // vLLM continuous_usage_stats: the second chunk's text is empty but its count went 1 -> 2.
  OpenAiStreamReader v;
  feed(v, R"({"choices":[{"index":0,"text":"a","finish_reason":null}],"usage":{"completion_tokens":1}})", 10);
  feed(v, R"({"choices":[{"index":0,"text":"","finish_reason":null}],"usage":{"completion_tokens":2}})", 20);
  feed(v, R"({"choices":[{"index":0,"text":"b","finish_reason":"length"}],"usage":{"completion_tokens":3}})", 30);
  REQUIRE(v.chunks().size() == 3);
  CHECK(v.chunks()[1].t_ns == 20);
  CHECK(v.chunks()[1].cumulative_tokens == 2);
  CHECK(v.cumulative_source() == "server usage per chunk");
  // llama.cpp without timings_per_token: usage and timings on the finish chunk only, which
  // carries no token; an empty chunk without any count is not a token either.
  OpenAiStreamReader l;
  feed(l, R"({"choices":[{"index":0,"text":"","finish_reason":null}]})", 5);
  feed(l, R"({"choices":[{"index":0,"text":"a","finish_reason":null}]})", 10);
  feed(l, R"({"choices":[{"index":0,"text":"b","finish_reason":null}]})", 20);
  feed(l, R"({"choices":[{"index":0,"text":"","finish_reason":"length"}],"usage":{"completion_tokens":3},"timings":{"predicted_n":3}})", 30);
  REQUIRE(l.chunks().size() == 2);
  CHECK(l.chunks()[0].t_ns == 10);
  CHECK(l.cumulative_source().empty());
  // llama.cpp with timings_per_token: the empty first chunk counted 1, so it is the first token.
  OpenAiStreamReader t;
  feed(t, R"({"choices":[{"index":0,"text":"","finish_reason":null}],"timings":{"predicted_n":1}})", 5);
  feed(t, R"({"choices":[{"index":0,"text":"ab","finish_reason":null}],"timings":{"predicted_n":3}})", 10);
  feed(t, R"({"choices":[{"index":0,"text":"","finish_reason":"length"}],"usage":{"completion_tokens":3},"timings":{"predicted_n":3}})", 30);
  REQUIRE(t.chunks().size() == 2);
  CHECK(t.chunks()[0].t_ns == 5);
  CHECK(t.chunks()[1].cumulative_tokens == 3);
  CHECK(t.cumulative_source() == "server timings per chunk");
  // llama.cpp's own /completion with return_tokens: a top-level `tokens` list per chunk.
  OpenAiStreamReader n;
  feed(n, R"({"choices":[{"index":0,"text":""}],"tokens":[195]})", 5);
  REQUIRE(n.chunks().size() == 1);
  CHECK(n.chunks()[0].ids == 1);
}

TEST_CASE("stream reader: tokens first counted on the finish or usage chunk, nothing streamed before, arrive with it") {
  // llama.cpp: every token held back (no UTF-8 character completed), one finish chunk.
  OpenAiStreamReader l;
  feed(l, R"({"choices":[{"index":0,"text":"","finish_reason":"length"}],"usage":{"completion_tokens":3},"timings":{"predicted_n":3}})", 50);
  feed(l, "[DONE]", 60);
  REQUIRE(l.chunks().size() == 1);
  CHECK(l.chunks()[0].t_ns == 50);
  CHECK(l.chunks()[0].cumulative_tokens == 3);
  CHECK(l.cumulative_source() == "server count on the finish chunk, no token streamed before it");
  // An empty finish chunk, then a usage-only chunk: the usage chunk is the first sign.
  OpenAiStreamReader v;
  feed(v, R"({"choices":[{"index":0,"text":"","finish_reason":"length"}]})", 10);
  feed(v, R"({"choices":[],"usage":{"completion_tokens":1}})", 20);
  REQUIRE(v.chunks().size() == 1);
  CHECK(v.chunks()[0].t_ns == 20);
  // Zero tokens counted: still no chunk.
  OpenAiStreamReader z;
  feed(z, R"({"choices":[{"index":0,"text":"","finish_reason":"stop"}],"usage":{"completion_tokens":0}})", 10);
  CHECK(z.chunks().empty());
}

TEST_CASE("stream reader: completions text, reasoning content counts as tokens") {
  OpenAiStreamReader r;
  feed(r, R"({"choices":[{"index":0,"text":""}]})", 1);
  feed(r, R"({"choices":[{"index":0,"text":"a"}]})", 2);
  feed(r, R"({"choices":[{"index":0,"delta":{"reasoning_content":"think"}}]})", 3);
  CHECK(r.chunks().size() == 2);
  CHECK(r.text() == "a");
}

TEST_CASE("stream reader: tool-call deltas merge by index") {
  OpenAiStreamReader r;
  feed(r, R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c0","type":"function","function":{"name":"get","arguments":""}}]}}]})", 1);
  feed(r, R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":"}}]}}]})", 2);
  feed(r, R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":" 1}"}}]}}]})", 3);
  feed(r, R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"c1","function":{"name":"put","arguments":"{}"}}]}}]})", 4);
  const auto calls = r.tool_calls();
  REQUIRE(calls.size() == 2);
  CHECK(calls[0]["id"] == "c0");
  CHECK(calls[0]["function"]["name"] == "get");
  CHECK(calls[0]["function"]["arguments"] == "{\"a\": 1}");
  CHECK(calls[1]["function"]["name"] == "put");
  CHECK(r.chunks().size() == 4);  // each tool-call delta is a token-bearing event
}

TEST_CASE("stream reader: a tool-call index beyond 1024 calls is a stream error, not an allocation (fuzz_sse_stream)") {
  OpenAiStreamReader r;
  feed(r, R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":1023,"id":"c","function":{"name":"f"}}]}}]})", 1);
  CHECK(r.error().empty());
  CHECK(r.tool_calls().size() == 1024);
  feed(r, R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":8200576419795,"function":{"arguments":"{}"}}]}}]})", 2);
  CHECK(r.error() == "SSE event #2: tool_calls index 8200576419795 is beyond 1024 calls");
  CHECK(r.tool_calls().size() == 1024);
}

TEST_CASE("stream reader: malformed events are clear errors") {
  OpenAiStreamReader a;
  feed(a, "{not json", 1);
  CHECK(a.error().find("malformed SSE event #1") != std::string::npos);
  OpenAiStreamReader b;
  feed(b, R"({"error":{"message":"engine exploded","type":"server_error"}})", 1);
  CHECK(b.error() == "server error in stream: engine exploded");
  OpenAiStreamReader c;
  feed(c, R"({"choices":{"text":"x"}})", 1);
  CHECK(c.error().find("choices is not an array") != std::string::npos);
  OpenAiStreamReader d;
  feed(d, "[DONE]", 1);
  feed(d, R"({"choices":[]})", 2);
  CHECK(d.error().find("after data: [DONE]") != std::string::npos);
  OpenAiStreamReader e;
  feed(e, R"({"id":"x"})", 1);
  CHECK(e.error().find("neither choices nor usage") != std::string::npos);
}

TEST_CASE("token timing: a chunk's gap is split evenly over its tokens") {
  // Chunks at 100 (1 token), 200 (2 tokens), 500 (3 tokens).
  const std::vector<ChunkArrival> chunks = {{100, 1}, {200, 2}, {500, 3}};
  const auto t = token_arrival_times(chunks);
  CHECK(t == std::vector<std::int64_t>{100, 150, 200, 300, 400, 500});
  // ITL samples: tokens - 1 of them, summing to last - first.
  std::int64_t sum = 0;
  for (std::size_t i = 1; i < t.size(); ++i) sum += t[i] - t[i - 1];
  CHECK(sum == 400);
  // Several tokens in the first chunk all arrive at its time.
  CHECK(token_arrival_times(std::vector<ChunkArrival>{{10, 3}, {40, 1}}) == std::vector<std::int64_t>{10, 10, 10, 40});
}

TEST_CASE("token timing: distributing the server's token count over chunks") {
  CHECK(distribute_tokens(std::vector<int>{1, 1, 1}, 3) == std::vector<int>{1, 1, 1});
  CHECK(distribute_tokens(std::vector<int>{1, 3, 1}, 5) == std::vector<int>{1, 3, 1});   // local counts agree
  CHECK(distribute_tokens(std::vector<int>{1, 1}, 6) == std::vector<int>{3, 3});         // no local hint: even
  CHECK(distribute_tokens(std::vector<int>{1, 2, 4}, 10) == std::vector<int>{1, 3, 6});  // extra 7 by weight-1 (0,1,3)
  CHECK(distribute_tokens(std::vector<int>{1, 1, 1}, 2) == std::vector<int>{1, 1, 1});   // cannot place fewer
  const auto d = distribute_tokens(std::vector<int>{2, 2, 2}, 7);
  CHECK(d[0] + d[1] + d[2] == 7);
}

TEST_CASE("token timing: chunks of one read or one client wake-up are one arrival at the latest time") {
  // wake 2 read a peeked chunk (kernel time 100) and one that landed after the peek (read time
  // 103): as two arrivals they would give a 3 ns ITL to a token produced ~55 us after the other.
  const std::vector<ChunkArrival> in = {{50, 1, 1}, {100, 1, 2}, {103, 2, 2}, {150, 1, 3}, {200, 1, 4}, {200, 1, 0}};
  const auto m = merge_same_read(in);
  REQUIRE(m.size() == 4);
  CHECK(m[0].t_ns == 50);
  CHECK(m[1].t_ns == 103);
  CHECK(m[1].tokens == 3);
  CHECK(m[2].t_ns == 150);
  CHECK(m[3].t_ns == 200);
  CHECK(m[3].tokens == 2);  // same time, wake unknown: one read
  const auto t = token_arrival_times(m);
  REQUIRE(t.size() == 7);
  CHECK(t[1] == 50 + 53 / 3);  // the wake's gap (50 -> 103) spread over its three tokens
  CHECK(t[3] == 103);
}

// A hostile server's error event nested 100,000 deep crashed the client when the
// reader printed it.
TEST_CASE("stream reader: an event nested deeper than the limit is a stream error, not a stack overflow") {
  OpenAiStreamReader r;
  feed(r, R"({"choices":[{"index":0,"text":"a"}]})", 100);
  feed(r, R"({"error": )" + std::string(100000, '[') + std::string(100000, ']') + "}", 200);
  CHECK(r.error() == "SSE event #2 nests arrays/objects deeper than 256 levels");
  CHECK(r.text() == "a");
}

TEST_CASE("stream reader: logprobs in the chat shape (ids from id or token_id:N) and the completions shape (dict sorted)") {
  OpenAiStreamReader c;
  feed(c, R"({"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null}]})", 10);
  feed(c, R"({"choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":{"content":[
            {"token":"H","logprob":-0.5,"bytes":[72],"id":75,"top_logprobs":[{"token":"H","logprob":-0.5,"id":75},{"token":"J","logprob":-1.5}]},
            {"token":"token_id:76","logprob":-9999.0,"top_logprobs":[]}],"refusal":null}}]})", 20);
  feed(c, R"({"choices":[{"index":0,"delta":{"content":"!"},"logprobs":{"content":[{"token":"!","logprob":"bad"}]}}]})", 30);
  feed(c, "[DONE]", 40);
  CHECK(c.error().empty());
  REQUIRE(c.logprobs().size() == 2);  // the entry whose logprob is no number is skipped
  CHECK(c.logprobs()[0].chosen.token == "H");
  CHECK(c.logprobs()[0].chosen.logprob == -0.5);
  CHECK(c.logprobs()[0].chosen.id == 75);
  REQUIRE(c.logprobs()[0].top.size() == 2);
  CHECK(c.logprobs()[0].top[1].token == "J");
  CHECK(c.logprobs()[0].top[1].id == -1);
  CHECK(c.logprobs()[1].chosen.id == 76);
  CHECK(c.logprobs()[1].chosen.logprob == -9999.0);

  OpenAiStreamReader p;
  feed(p, R"({"choices":[{"index":0,"text":"ab","logprobs":{"tokens":["a","b"],"token_logprobs":[-0.1,-2.0],
            "top_logprobs":[{"z":-3.0,"a":-0.1,"y":-3.0},{"b":-2.0}],"text_offset":[0,1]}}]})", 10);
  feed(p, R"({"choices":[{"index":0,"text":"","finish_reason":"length","logprobs":null}]})", 20);
  feed(p, "[DONE]", 30);
  REQUIRE(p.logprobs().size() == 2);
  CHECK(p.logprobs()[1].chosen.token == "b");
  CHECK(p.logprobs()[1].chosen.logprob == -2.0);
  REQUIRE(p.logprobs()[0].top.size() == 3);
  CHECK(p.logprobs()[0].top[0].token == "a");
  CHECK(p.logprobs()[0].top[1].token == "y");  // equal log-probabilities: by token string
  CHECK(p.logprobs()[0].top[2].token == "z");
}
