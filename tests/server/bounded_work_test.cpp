// Work per request is bounded: a prompt that cannot fit the context is refused on its bytes
// before any tokenising, or by a tokenizer told to stop once more ids than fit are counted; the
// drain timeout stops requests still decoding, and a client that leaves while queued gives its
// place up (in process, over the loopback, FakeGenerator).
#if ATLAS_HAVE_HTTPLIB
#include <chrono>
#include <csignal>
#include <future>

#include <doctest/doctest.h>
#include <httplib.h>

#include "server/server.hpp"
#include "suites/endpoint/sse_parser.hpp"
#include "tests/loopback_socket.hpp"
#include "tests/server/fake_generator.hpp"

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
}  // namespace

TEST_CASE("bounded work: a prompt longer than the context could hold is 400 before tokenising") {
  std::signal(SIGPIPE, SIG_IGN);
  atlas::test::FakeGenerator gen;
  gen.context = 512;  // the byte tokenizer: one byte per token, so at most 511 bytes fit
  atlas::server::ServerOptions opts;
  opts.served_model_name = "fake";
  atlas::server::Server srv(gen, opts);
  const int port = srv.start();
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(10, 0);
  const int before = gen.byte_tokenizer().encode_calls.load();
  const json big = {{"model", "fake"}, {"prompt", std::string(10'000'000, 'a')}};
  const auto t0 = Clock::now();
  auto r = c.Post("/v1/completions", big.dump(), "application/json");
  REQUIRE(r);
  CHECK(r->status == 400);
  const json e = json::parse(r->body)["error"];
  CHECK(e["code"] == "context_length_exceeded");
  CHECK(e["param"] == "prompt");
  CHECK(e["message"].get<std::string>().find("has 10000000 bytes") != std::string::npos);
  CHECK(gen.byte_tokenizer().encode_calls.load() == before);  // never tokenised
  MESSAGE("10 MB prompt answered 400 in " << seconds_since(t0) << " s (JSON parse included)");
  // The same through the chat template.
  const json chat = {{"model", "fake"}, {"messages", json::array({{{"role", "user"}, {"content", std::string(1'000'000, 'b')}}})}};
  r = c.Post("/v1/chat/completions", chat.dump(), "application/json");
  REQUIRE(r);
  CHECK(r->status == 400);
  CHECK(json::parse(r->body)["error"]["code"] == "context_length_exceeded");
  CHECK(gen.byte_tokenizer().encode_calls.load() == before);
  // At the edge: 510 bytes + BOS = 511 tokens fit; 511 bytes do not.
  r = c.Post("/v1/completions", json{{"model", "fake"}, {"prompt", std::string(510, 'a')}, {"max_tokens", 1}}.dump(), "application/json");
  CHECK(r->status == 200);
  r = c.Post("/v1/completions", json{{"model", "fake"}, {"prompt", std::string(511, 'a')}, {"max_tokens", 1}}.dump(), "application/json");
  CHECK(r->status == 400);
  // 511 bytes pass the byte bound (510 ids + a dummy space's byte); the tokenizer is asked to
  // stop past the 511 ids that fit, and the answer says so.
  CHECK(gen.byte_tokenizer().last_max_ids.load() == 511);
  CHECK(json::parse(r->body)["error"]["code"] == "context_length_exceeded");
  CHECK(json::parse(r->body)["error"]["message"].get<std::string>().find("has more than 511 tokens") != std::string::npos);
  srv.stop();
}

TEST_CASE("bounded work: the drain timeout stops requests still decoding; stop() returns within it") {
  std::signal(SIGPIPE, SIG_IGN);
  atlas::test::FakeGenerator gen;
  gen.context = 1 << 20;
  gen.token_delay = std::chrono::microseconds(2000);  // 100,000 tokens would take 200 s
  atlas::server::ServerOptions opts;
  opts.served_model_name = "fake";
  opts.drain_timeout_ms = 500;
  opts.abort_grace_ms = 200;
  atlas::server::Server srv(gen, opts);
  const int port = srv.start();
  auto request = [port](bool stream) {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(30, 0);
    const json body = {{"model", "fake"}, {"prompt", "x"}, {"max_tokens", 100000}, {"ignore_eos", true}, {"stream", stream}};
    auto r = c.Post("/v1/completions", body.dump(), "application/json");
    return r ? std::make_pair(r->status, r->body) : std::make_pair(-1, std::string());
  };
  auto streaming = std::async(std::launch::async, request, true);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto queued = std::async(std::launch::async, request, false);  // waits behind the stream
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto t0 = Clock::now();
  srv.stop();
  const double took = seconds_since(t0);
  CHECK(took >= 0.5);
  CHECK(took < 0.5 + 2 * 0.2 + 0.5);  // drain + the grace twice + slack
  const auto [s_status, s_body] = streaming.get();
  CHECK(s_status == 200);
  atlas::suites::endpoint::SseParser p;
  std::vector<atlas::suites::endpoint::SseEvent> evs;
  p.feed(s_body, evs);
  REQUIRE(!evs.empty());
  CHECK(json::parse(evs.back().data)["error"]["code"] == "drain_timeout");
  CHECK(s_body.find("[DONE]") == std::string::npos);
  const auto [q_status, q_body] = queued.get();
  CHECK(q_status == 503);
  CHECK(json::parse(q_body)["error"]["code"] == "drain_timeout");
  CHECK(srv.stats().aborted == 2);
}

TEST_CASE("bounded work: a client that leaves while queued gives its place up without decoding") {
  std::signal(SIGPIPE, SIG_IGN);
  atlas::test::FakeGenerator gen;
  gen.context = 1 << 20;
  gen.token_delay = std::chrono::microseconds(2000);
  atlas::server::ServerOptions opts;
  opts.served_model_name = "fake";
  atlas::server::Server srv(gen, opts);
  const int port = srv.start();
  auto busy = std::async(std::launch::async, [port] {  // holds the engine for about 1 s
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(30, 0);
    const json body = {{"model", "fake"}, {"prompt", "x"}, {"max_tokens", 500}, {"ignore_eos", true}};
    auto r = c.Post("/v1/completions", body.dump(), "application/json");
    return r ? r->status : -1;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  for (const bool stream : {false, true}) {
    atlas::test::LoopbackSocket s(port);
    const std::string body = json{{"model", "fake"}, {"prompt", "y"}, {"max_tokens", 500}, {"stream", stream}}.dump();
    REQUIRE(s.send("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " +
                   std::to_string(body.size()) + "\r\n\r\n" + body));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    s.close();
  }
  const auto t0 = Clock::now();
  while (srv.stats().cancelled < 2 && seconds_since(t0) < 0.5) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK(srv.stats().cancelled == 2);  // while the first request still decodes
  CHECK(busy.get() == 200);
  CHECK(gen.generate_calls == 1);
  srv.stop();
}

#endif
