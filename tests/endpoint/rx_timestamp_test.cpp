// Kernel receive timestamps: the arrival time of bytes, not the time the client got to read them.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "common/clock.hpp"
#include "suites/endpoint/http_client.hpp"
#include "suites/endpoint/rx_timestamp.hpp"
#include "tests/skip.hpp"

#if ATLAS_HAVE_CURL && ATLAS_HAVE_HTTPLIB
#include "tests/endpoint/script_server.hpp"
#endif

using namespace atlas::suites::endpoint;
using std::chrono::milliseconds;

namespace {
/// A connected loopback TCP pair: `client` has receive timestamps on, `server` has Nagle off.
struct TcpPair {
  int client = -1, server = -1;
  bool timestamps = false;
  TcpPair() {
    const int lfd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(lfd, 1) == 0);
    socklen_t len = sizeof a;
    ::getsockname(lfd, reinterpret_cast<sockaddr*>(&a), &len);
    client = ::socket(AF_INET, SOCK_STREAM, 0);
    timestamps = enable_rx_timestamps(client);
    REQUIRE(::connect(client, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    server = ::accept(lfd, nullptr, nullptr);
    ::close(lfd);
    int one = 1;
    ::setsockopt(server, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  ~TcpPair() {
    ::close(client);
    ::close(server);
  }
};
}  // namespace

TEST_CASE("rx timestamp: the peek gives the arrival time of the newest waiting bytes and consumes nothing") {
#if !defined(__linux__)
  ATLAS_SKIP("kernel receive timestamps are Linux-only here");
#endif
  TcpPair p;
  REQUIRE(p.timestamps);
  std::vector<char> scratch(4096);
  CHECK(peek_pending(p.client, scratch).bytes == 0);  // nothing waiting
  CHECK(peek_pending(p.client, scratch).arrival_ns == 0);
  // The kernel may switch its timestamping on a moment after the first request (a static key
  // flipped from a work queue): send until a segment carries a time.
  std::int64_t t_first = 0;
  for (int i = 0; i < 50 && t_first == 0; ++i) {
    char junk[64];
    REQUIRE(::send(p.server, "x", 1, 0) == 1);
    std::this_thread::sleep_for(milliseconds(1));
    t_first = peek_pending(p.client, scratch).arrival_ns;
    (void)::recv(p.client, junk, sizeof junk, 0);
  }
  REQUIRE(t_first > 0);

  const std::int64_t before_a = atlas::now_ns();
  REQUIRE(::send(p.server, "aaaa", 4, 0) == 4);
  const std::int64_t after_a = atlas::now_ns();
  std::this_thread::sleep_for(milliseconds(30));  // the client is "late" to read
  const PendingBytes a = peek_pending(p.client, scratch);
  CHECK(a.bytes == 4);
  CHECK(a.arrival_ns >= before_a);
  CHECK(a.arrival_ns <= after_a);  // on loopback the segment is received inside send()

  const std::int64_t before_b = atlas::now_ns();
  REQUIRE(::send(p.server, "bb", 2, 0) == 2);
  const std::int64_t after_b = atlas::now_ns();
  std::this_thread::sleep_for(milliseconds(5));
  const PendingBytes ab = peek_pending(p.client, scratch);  // the newest of the two segments
  CHECK(ab.bytes == 6);
  CHECK(ab.arrival_ns >= before_b);
  CHECK(ab.arrival_ns <= after_b);

  char buf[16] = {};
  CHECK(::recv(p.client, buf, sizeof buf, 0) == 6);  // the peeks left every byte in place
  CHECK(std::string(buf, 6) == "aaaabb");
  CHECK(peek_pending(p.client, scratch).bytes == 0);

  // As much waiting as the scratch holds: the newest segment may be out of reach, so no time.
  std::vector<char> tiny(4);
  REQUIRE(::send(p.server, "0123456789", 10, 0) == 10);
  std::this_thread::sleep_for(milliseconds(1));
  CHECK(peek_pending(p.client, tiny).bytes == 4);
  CHECK(peek_pending(p.client, tiny).arrival_ns == 0);
  CHECK(peek_pending(p.client, scratch).arrival_ns > 0);
}

#if ATLAS_HAVE_CURL && ATLAS_HAVE_HTTPLIB
TEST_CASE("http client: bytes that land after the peek never take the peek's earlier time") {
  // curl keeps reading within one curl_multi_perform while the socket has data: events written
  // while the first event's callback is busy are read in the same call, after the poll loop's
  // peek. They must be stamped no earlier than the server wrote them.
  atlas::test::ScriptServer s;
  s.script = {{milliseconds(5), atlas::test::completion_event("a")},
              {milliseconds(5), atlas::test::completion_event("b")},
              {milliseconds(5), atlas::test::completion_event("c")},
              {{}, "data: [DONE]\n\n"}};
  s.start();
  HttpClient client;
  HttpRequest warm;  // the kernel turns timestamping on lazily: warm the connection first
  warm.url = s.url() + "/models";
  REQUIRE(client.perform(warm).ok);
  std::this_thread::sleep_for(milliseconds(20));

  HttpRequest r;
  r.method = "POST";
  r.url = s.url() + "/completions";
  r.body = "{}";
  std::string text;
  std::vector<std::pair<std::size_t, std::int64_t>> completed;  // events complete so far, stamp
  bool slept = false;
  const HttpResponse res = client.perform(r, [&](std::string_view bytes, std::int64_t t_ns, std::uint64_t) {
    text.append(bytes);
    std::size_t events = 0;
    for (std::size_t at = text.find("\n\n"); at != std::string::npos; at = text.find("\n\n", at + 2)) ++events;
    completed.emplace_back(events, t_ns);
    if (!slept) {  // the client thread is 40 ms late for everything after the first read
      slept = true;
      std::this_thread::sleep_for(milliseconds(40));
    }
    return true;
  });
  REQUIRE(res.ok);
  CHECK(res.kernel_stamped_reads + res.user_stamped_reads >= 2);
  const auto w = s.write_ns().back();  // write times of a, b, c, [DONE]
  REQUIRE(w.size() == 4);
  REQUIRE(completed.back().first == 4);
  for (const auto& [events, t_ns] : completed) {
    if (events == 0) continue;
    INFO("read completing event " << events << " stamped " << (t_ns - w[events - 1]) / 1000 << " us after its write");
    CHECK(t_ns >= w[events - 1]);
  }
}
#endif
