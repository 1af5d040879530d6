// The server in-process under slow and departing clients (server/http_connection.hpp):
// more stalled or dripping clients than the former 64 HTTP threads must not delay /health, each
// is closed at its phase's deadline, a header flood is cut off, pipelined requests are all
// answered, and a client that leaves mid-request frees the decode slot. Short deadlines keep
// every case within about a second.
#if ATLAS_HAVE_HTTPLIB
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <csignal>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "server/error.hpp"
#include "server/server.hpp"
#include "tests/loopback_socket.hpp"
#include "tests/sanitized.hpp"
#include "tests/server/fake_generator.hpp"

using atlas::server::Server;
using atlas::server::ServerOptions;
using atlas::test::FakeGenerator;
using Clock = std::chrono::steady_clock;

namespace {

long long ms_since(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
}

/// A raw loopback connection (httplib's client cannot send a partial request).
class Raw : public atlas::test::LoopbackSocket {
 public:
  using LoopbackSocket::LoopbackSocket;
  /// True once the server has closed the connection (EOF or reset); reads what has come (one
  /// read, after waiting up to `wait_ms` for it).
  bool closed_by_server(int wait_ms = 0) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, wait_ms) <= 0) return false;
    char buf[65536];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0 && errno == ECONNRESET) reset = true;
    if (n == 0 || (n < 0 && errno != EAGAIN)) return true;
    if (n > 0) got.append(buf, static_cast<std::size_t>(n));
    return false;
  }
  /// Reads until the server closes or `timeout_ms` passes.
  std::string read_until_closed(int timeout_ms) {
    const auto t0 = Clock::now();
    while (ms_since(t0) < timeout_ms) {
      if (closed_by_server(20)) break;
    }
    return got;
  }
  /// Reads until `needle` has arrived or `timeout_ms` passes.
  bool read_until(const std::string& needle, int timeout_ms) {
    const auto t0 = Clock::now();
    while (got.find(needle) == std::string::npos && ms_since(t0) < timeout_ms) {
      if (closed_by_server(20)) break;
    }
    return got.find(needle) != std::string::npos;
  }
  /// Sends `total` bytes of 'x' in `chunk`-byte sends as fast as the server takes them; stops
  /// at the first failed send (a reset shows as ECONNRESET or EPIPE there).
  void send_filler(std::size_t total, std::size_t chunk) {
    const std::string buf(chunk, 'x');
    for (std::size_t sent = 0; sent < total;) {
      const ssize_t n = ::send(fd_, buf.data(), std::min(chunk, total - sent), MSG_NOSIGNAL);
      if (n <= 0) {
        if (errno == ECONNRESET) reset = true;
        send_failed = true;
        return;
      }
      sent += static_cast<std::size_t>(n);
    }
  }
  std::string got;
  bool reset = false;        ///< a recv or send saw ECONNRESET
  bool send_failed = false;  ///< send_filler stopped early
};

int count(const std::string& s, const std::string& needle) {
  int n = 0;
  for (std::size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + 1)) ++n;
  return n;
}

/// GET /health on a fresh connection: the status (0 = closed without one, -1 = no answer in
/// `timeout_ms`) and how long it took.
std::pair<int, long long> health(int port, int timeout_ms = 3000) {
  const auto t0 = Clock::now();
  Raw c(port);
  c.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  const std::string r = c.read_until_closed(timeout_ms);
  const long long ms = ms_since(t0);
  if (r.rfind("HTTP/1.1 ", 0) != 0) return {ms >= timeout_ms ? -1 : 0, ms};
  return {std::stoi(r.substr(9, 3)), ms};
}

/// This process's VmRSS in KiB (the server runs in-process).
long rss_kib() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return 0;
}

struct Fixture {
  FakeGenerator gen;
  ServerOptions opts;
  std::unique_ptr<Server> server;
  int port = 0;
  Fixture() {
    std::signal(SIGPIPE, SIG_IGN);
    opts.served_model_name = "fake";
    opts.max_body_bytes = 1 << 16;
  }
  void start() {
    server = std::make_unique<Server>(gen, opts);
    port = server->start();
  }
};

/// Timing bounds are this many times looser under the sanitizers (make test-sanitize on a loaded
/// 2-core CI box runs 5-10x slower); each bound stays below what the unfixed server measured.
constexpr int kSlack = atlas::test::kSanitized ? 3 : 1;

}  // namespace

TEST_CASE("slow clients: 200 stalled or dripping connections do not delay /health, and each is closed at its deadline") {
  Fixture f;
  f.opts.connections.header_timeout_ms = 800;
  f.opts.connections.body_timeout_ms = 800;
  f.opts.connections.idle_timeout_ms = 800;
  f.start();
  // 200 clients, more than the 64 HTTP threads atlas-serve had (each held one until httplib's
  // 60 s read timeout): a quarter send nothing, a quarter stall mid-headers, a quarter drip a
  // header byte every 100 ms (a per-read timeout never fires), a quarter stall mid-body.
  constexpr int kSlow = 200;
  std::vector<std::unique_ptr<Raw>> slow;
  const auto t_open = Clock::now();
  for (int i = 0; i < kSlow; ++i) {
    slow.push_back(std::make_unique<Raw>(f.port));
    switch (i % 4) {
      case 0: break;
      case 1:
      case 2: slow.back()->send("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "); break;
      case 3: slow.back()->send("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"mo"); break;
    }
  }
  long long worst_health = 0;
  std::vector<long long> closed_at(kSlow, -1);
  for (bool all_closed = false; !all_closed && ms_since(t_open) < 2500 * kSlack;) {
    const auto [status, ms] = health(f.port, 3000 * kSlack);
    CHECK_MESSAGE(status == 200, "/health with slow clients open: status " << status << " after " << ms << " ms");
    worst_health = std::max(worst_health, ms);
    for (int i = 0; i < kSlow; ++i) {
      if (closed_at[i] >= 0) continue;
      if (i % 4 == 2) slow[i]->send("a");  // the drip
      if (slow[i]->closed_by_server()) closed_at[i] = ms_since(t_open);
    }
    all_closed = std::count(closed_at.begin(), closed_at.end(), -1) == 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  MESSAGE("/health with " << kSlow << " slow clients: worst " << worst_health << " ms; peak connection threads "
                          << f.server->stats().peak_connection_threads);
  CHECK(worst_health < 1000 * kSlack);
  int still_open = 0;
  long long last_close = 0;
  for (int i = 0; i < kSlow; ++i) {
    if (closed_at[i] < 0) ++still_open;
    last_close = std::max(last_close, closed_at[i]);
  }
  MESSAGE("slow clients closed by the server: " << kSlow - still_open << " of " << kSlow << ", the last after " << last_close << " ms");
  // Deadlines 800 ms (idle, headers, body): every slow client is gone well before 2.5 s (7.5 s
  // under the sanitizers); with a per-read timeout only, the dripping ones would never be.
  CHECK(still_open == 0);
  // The body stallers got httplib's 400 before the close; the others nothing.
  for (int i = 3; i < kSlow; i += 4) CHECK_MESSAGE(slow[i]->got.rfind("HTTP/1.1 400", 0) == 0, slow[i]->got.substr(0, 60));
}

TEST_CASE("slow clients: beyond max_connections the slow ones get short deadlines, so /health waits about a second, not the request timeout") {
  Fixture f;
  f.opts.connections.max_connections = 40;
  f.opts.connections.header_timeout_ms = f.opts.connections.body_timeout_ms = f.opts.connections.idle_timeout_ms = 5000;
  f.start();
  // 100 slow clients for 40 threads: 60 connections wait. Under pressure the idle and request
  // deadlines shrink to 250 ms and 1 s, so the 40 threads turn over within a second or so; with
  // the 5 s deadlines alone /health would wait 5 s and more.
  std::vector<std::unique_ptr<Raw>> slow;
  for (int i = 0; i < 100; ++i) {
    slow.push_back(std::make_unique<Raw>(f.port));
    if (i % 2) slow.back()->send("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the attackers are queued first
  long long worst = 0;
  for (int k = 0; k < 3; ++k) {
    const auto [status, ms] = health(f.port, 8000);
    CHECK(status == 200);
    worst = std::max(worst, ms);
  }
  MESSAGE("/health with 100 slow clients and 40 connection threads: worst " << worst << " ms");
  // Measured 1.2 s; the bound leaves room for a loaded sanitizer run and still fails without
  // the pressure deadlines (the 5 s deadlines alone: no answer in 8 s).
  CHECK(worst < 4000);
}

TEST_CASE("slow clients: a header flood is cut off at 64 KiB instead of being stored") {
  Fixture f;
  f.start();
  Raw c(f.port);
  std::string flood = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  for (int i = 0; i < 100000; ++i) flood += "X-Flood-" + std::to_string(i) + ": v\r\n";  // 2 MiB of small headers
  flood += "Connection: close\r\n\r\n";
  c.send(flood);  // fails part-way once the server has closed
  const std::string r = c.read_until_closed(5000);
  CAPTURE(r.substr(0, 80));
  // httplib alone reads every header into a map and answers 200.
  CHECK((r.empty() || r.rfind("HTTP/1.1 4", 0) == 0));
  CHECK(health(f.port).first == 200);
}

TEST_CASE("slow clients: 100 pipelined requests on one connection are all answered, in order") {
  Fixture f;
  f.start();
  Raw c(f.port);
  std::string batch;
  for (int i = 0; i < 99; ++i) {
    batch += i % 2 ? "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                   : "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 44\r\n\r\n"
                     "{\"model\":\"fake\",\"prompt\":\"x\",\"max_tokens\":2}";
  }
  batch += "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  REQUIRE(c.send(batch));
  const std::string r = c.read_until_closed(5000);
  CHECK(count(r, "HTTP/1.1 200") == 100);
  CHECK(count(r, "\"text_completion\"") == 50);
  // In order: the k-th response answers the k-th request (completions at even k, /health at odd
  // k and at 99).
  std::vector<std::size_t> starts;
  for (std::size_t p = r.find("HTTP/1.1 "); p != std::string::npos; p = r.find("HTTP/1.1 ", p + 1)) starts.push_back(p);
  REQUIRE(starts.size() == 100);
  int out_of_order = 0;
  for (std::size_t k = 0; k < starts.size(); ++k) {
    const std::string one = r.substr(starts[k], (k + 1 < starts.size() ? starts[k + 1] : r.size()) - starts[k]);
    const bool completion = k % 2 == 0 && k < 99;
    if (completion ? one.find("\"text_completion\"") == std::string::npos : one.find("\"ok\"") == std::string::npos) ++out_of_order;
  }
  CHECK(out_of_order == 0);
}

TEST_CASE("slow clients: a 413 for a declared body over the limit closes the connection (its body is not read as a request)") {
  Fixture f;
  f.start();
  Raw c(f.port);
  c.send("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000\r\n\r\nGET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  const std::string r = c.read_until_closed(3000);
  CHECK(r.rfind("HTTP/1.1 413", 0) == 0);
  CHECK(count(r, "HTTP/1.1 ") == 1);
}

TEST_CASE("slow clients: a client that leaves mid-request frees the decode slot within milliseconds") {
  Fixture f;
  f.opts.queue_limit = 0;  // one request at a time: a busy slot answers 429
  f.gen.reply = std::string(400, 'a');
  f.gen.token_delay = std::chrono::milliseconds(5);  // 2 s for the whole reply
  f.start();
  const std::string stream_body = R"({"model":"fake","prompt":"x","stream":true})";
  const std::string plain_body = R"({"model":"fake","prompt":"x"})";
  for (const bool stream : {false, true}) {
    CAPTURE(stream);
    const std::string& body = stream ? stream_body : plain_body;
    const auto cancelled_before = f.server->stats().cancelled;
    {
      Raw c(f.port);
      c.send("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " +
             std::to_string(body.size()) + "\r\n\r\n" + body);
      if (stream) REQUIRE(c.read_until("data: ", 2000));
      else std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }  // the client closes mid-decode
    const auto t0 = Clock::now();
    int status = 0;
    while (ms_since(t0) < 3000) {
      Raw c(f.port);
      c.send("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: 44\r\n\r\n"
             "{\"model\":\"fake\",\"prompt\":\"x\",\"max_tokens\":1}");
      const std::string r = c.read_until_closed(3000);
      status = r.size() > 12 ? std::stoi(r.substr(9, 3)) : 0;
      if (status == 200) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    const long long freed = ms_since(t0);
    MESSAGE(std::string(stream ? "stream" : "non-stream") << ": the slot was free " << freed << " ms after the client left");
    CHECK(status == 200);
    // Without the check the non-streaming request decodes its 400 tokens (2 s) for nobody.
    CHECK(freed < 500 * kSlack);
    CHECK(f.server->stats().cancelled == cancelled_before + 1);
  }
}

TEST_CASE("slow clients: connection limits that are not positive are a ServerError naming them") {
  FakeGenerator gen;
  ServerOptions opts;
  opts.connections.header_timeout_ms = 0;
  CHECK_THROWS_WITH_AS(Server(gen, opts), doctest::Contains("header 0"), atlas::server::ServerError);
  opts.connections.header_timeout_ms = 1000;
  opts.connections.max_connections = 0;
  CHECK_THROWS_WITH_AS(Server(gen, opts), doctest::Contains("max_connections 0"), atlas::server::ServerError);
}

#endif

TEST_CASE("slow clients: a chunked body past max_body_bytes is cut off with a 413, not stored") {
  // httplib 0.11.4 checks payload_max_length against Content-Length only: a chunked body grew
  // req.body without bound, and 1 s of body deadline per 64 KiB never stops a fast client.
  Fixture f;  // max_body_bytes 64 KiB
  f.start();
  std::atomic<bool> sampling{true};
  std::atomic<long> peak{0};
  const long base = rss_kib();
  std::thread sampler([&] {
    while (sampling) {
      peak = std::max(peak.load(), rss_kib());
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  Raw c(f.port);
  REQUIRE(c.send("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"));
  const std::size_t total = 17u << 20, piece = 1u << 20;
  const std::string chunk = "100000\r\n" + std::string(piece, 'x') + "\r\n";  // 0x100000 = 1 MiB
  bool cut = false;
  for (std::size_t sent = 0; sent < total; sent += piece) {
    if (!c.send(chunk)) {
      cut = true;  // the server stopped reading and closed
      break;
    }
  }
  if (!cut) c.send("0\r\n\r\n");
  const std::string r = c.read_until_closed(5000);
  sampling = false;
  sampler.join();
  const long grew_kib = peak - base;
  MESSAGE("17 MiB chunked body: the response began '" << r.substr(0, 12) << "', VmRSS grew " << grew_kib << " KiB at most");
  CHECK((r.rfind("HTTP/1.1 413", 0) == 0 || (r.empty() && cut)));
  if (!r.empty()) CHECK(r.find("body_too_large") != std::string::npos);
  CHECK(count(r, "HTTP/1.1 ") <= 1);
  if (!atlas::test::kSanitized) CHECK(grew_kib < 8 * 1024);  // ASan's quarantine keeps freed memory
  CHECK(f.server->stats().bad >= 1);
}

TEST_CASE("slow clients: a chunked body over the limit by less than the framing allowance is a 413 too") {
  Fixture f;
  f.start();
  const std::size_t n = (1u << 16) + 100;  // 64 KiB + 100 decoded, in 1 KiB chunks: within the allowance on the wire
  std::string req = "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (std::size_t left = n; left > 0;) {
    const std::size_t k = std::min<std::size_t>(left, 1024);
    char hex[16];
    std::snprintf(hex, sizeof hex, "%zx\r\n", k);
    req += hex + std::string(k, 'x') + "\r\n";
    left -= k;
  }
  req += "0\r\n\r\n";
  Raw c(f.port);
  REQUIRE(c.send(req));
  const std::string r = c.read_until_closed(3000);
  CHECK(r.rfind("HTTP/1.1 413", 0) == 0);
  CHECK(r.find("65536") != std::string::npos);
}

TEST_CASE("slow clients: a POST with neither Content-Length nor chunked is a 411 at once, not read until EOF") {
  Fixture f;
  f.start();
  Raw c(f.port);
  const auto t0 = Clock::now();
  REQUIRE(c.send("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n{\"model\":\"fake\",\"prompt\":\"x\"}"));
  const std::string r = c.read_until_closed(3000);
  CHECK(r.rfind("HTTP/1.1 411", 0) == 0);
  CHECK(r.find("length_required") != std::string::npos);
  CHECK(ms_since(t0) < 2000);
}

TEST_CASE("slow clients: a 413 before a 32 MiB body is read reaches a client that keeps sending (lingering close, no reset)") {
  // Closing with unread input makes Linux answer with a reset, and a client still writing its
  // body (python requests, the openai SDK) sees ECONNRESET instead of the 413.
  Fixture f;
  f.start();
  Raw c(f.port);
  const std::size_t total = 32u << 20;
  REQUIRE(c.send("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(total) +
                 "\r\n\r\n"));
  c.send_filler(total, 256u << 10);
  const std::string r = c.read_until_closed(5000);
  MESSAGE("sent all: " << !c.send_failed << ", reset: " << c.reset << ", got " << r.size() << " bytes");
  CHECK_FALSE(c.reset);
  CHECK_FALSE(c.send_failed);
  CHECK(r.rfind("HTTP/1.1 413", 0) == 0);
  CHECK(r.find("body_too_large") != std::string::npos);
  CHECK(r.find('}') != std::string::npos);  // the whole JSON body
}

TEST_CASE("slow clients: the Keep-Alive header advertises the configured idle timeout") {
  Fixture f;
  f.opts.connections.idle_timeout_ms = 3000;
  f.start();
  Raw c(f.port);
  REQUIRE(c.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
  REQUIRE(c.read_until("\"ok\"", 3000));
  CHECK(c.got.find("Keep-Alive: timeout=3,") != std::string::npos);
}
