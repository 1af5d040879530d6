// The real atlas-serve binary under a burst of 1,000 malformed or hostile requests over
// loopback: truncated JSON, huge max_tokens, deep nesting, invalid UTF-8, bodies and
// headers cut off mid-way (slowloris-style), lying Content-Length, garbage request lines. Each
// must get a 4xx or a closed connection (never a 2xx, a 5xx or a hang), /health must keep
// answering in between and while slow clients hold connections open, and the server's resident
// memory must stay flat (checked after a warm-up, from /proc/<pid>/status).
#if ATLAS_HAVE_HTTPLIB

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "tests/serve_process.hpp"
#include "tests/loopback_socket.hpp"
#include "tests/sanitized.hpp"
#include "tests/skip.hpp"
#include "tests/test_data.hpp"

namespace {

/// A raw loopback TCP connection (httplib's client would refuse to send most of these).
class Conn : public atlas::test::LoopbackSocket {
 public:
  using LoopbackSocket::LoopbackSocket;
  void shutdown_write() { ::shutdown(fd_, SHUT_WR); }
  /// True once the server has closed the connection (EOF or reset), without waiting.
  bool closed() {
    pollfd p{fd_, POLLIN, 0};
    while (::poll(&p, 1, 0) > 0) {
      char buf[4096];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
      if (n <= 0) return true;
    }
    return false;
  }
  /// Reads until the server closes or `timeout_ms` passes; `timed_out` says which.
  std::string read_all(int timeout_ms, bool& timed_out) {
    std::string out;
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    timed_out = false;
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now()).count();
      if (left <= 0) {
        timed_out = true;
        return out;
      }
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
      char buf[8192];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return out;  // closed (or reset)
      out.append(buf, static_cast<std::size_t>(n));
    }
  }
};

/// The status of an HTTP response, 0 when the server closed without one.
int status_of(const std::string& response) {
  if (response.rfind("HTTP/1.1 ", 0) != 0 || response.size() < 12) return 0;
  return std::stoi(response.substr(9, 3));
}

std::string post(const std::string& path, const std::string& body, const std::string& extra_headers = "") {
  return "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\n" + extra_headers +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

long rss_kib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

int health(int port) {
  Conn c(port);
  c.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  bool timed_out = false;
  const std::string r = c.read_all(5000, timed_out);
  return timed_out ? -1 : status_of(r);
}

struct Hostile {
  std::string name;
  std::function<std::string(int)> request;  ///< the bytes to send for the i-th repetition
  bool cut = false;                         ///< half-close after sending (a body or header cut off)
  std::string param = "";                   ///< a 400 must name this field (`"param":"..."`)
};

std::vector<Hostile> hostile_requests() {
  const std::string chat = "/v1/chat/completions", comp = "/v1/completions";
  const std::string good = R"({"model": "stories", "messages": [{"role": "user", "content": "Once upon a time"}], "max_tokens": 4})";
  std::vector<Hostile> v;
  v.push_back({"truncated JSON", [=](int i) { return post(chat, good.substr(0, 1 + static_cast<std::size_t>(i) % (good.size() - 1))); }});
  v.push_back({"huge max_tokens", [=](int i) {
                 const char* values[] = {"1073741824", "1e18", "18446744073709551616", "-1", "1073741823", "2147483648"};
                 return post(comp, std::string(R"({"model": "stories", "prompt": "x", "max_tokens": )") + values[i % 6] + "}");
               }});
  v.push_back({"deep nesting", [=](int i) {
                 const std::size_t depth = i % 2 ? 100000 : 20000;
                 const std::string field = i % 3 == 0 ? "messages" : i % 3 == 1 ? "max_tokens" : "tools";
                 return post(chat, R"({"model": "stories", ")" + field + R"(": )" + std::string(depth, '[') + std::string(depth, ']') + "}");
               }});
  v.push_back({"deep object nesting", [=](int) {
                 std::string b = R"({"model": "stories", "messages": [{"role": "user", "content": )";
                 for (int k = 0; k < 50000; ++k) b += R"({"a":)";
                 b += '1';
                 b.append(50000, '}');
                 b += "}]}";
                 return post(chat, b);
               }});
  v.push_back({"invalid UTF-8", [=](int i) {
                 const char* bad[] = {"\xff\xfe", "\xc3", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc0\xaf"};
                 return post(chat, std::string(R"({"model": "stories", "messages": [{"role": "user", "content": ")") + bad[i % 5] + R"("}]})");
               }});
  v.push_back({"invalid UTF-8 in the model name", [=](int) { return post(comp, "{\"model\": \"st\xffories\", \"prompt\": \"x\"}"); }});
  v.push_back({"wrong types", [=](int i) {
                 const char* bodies[] = {R"([])", R"("x")", R"({"model": 1})", R"({"model": "stories", "messages": "hi"})",
                                         R"({"model": "stories", "prompt": [1, -5, 1e9]})", R"({"model": "stories", "prompt": "x", "temperature": "hot"})",
                                         R"({"model": "stories", "messages": [{"role": "user", "content": [{"type": "image_url"}]}]})", R"({"model": "nope", "prompt": "x"})"};
                 return post(i % 2 ? chat : comp, bodies[i % 8]);
               }});
  v.push_back({"body cut off (slowloris)", [=](int i) {
                 const std::string head = "POST " + chat + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n";
                 return head + good.substr(0, static_cast<std::size_t>(i) % good.size());
               },
               true});
  v.push_back({"headers cut off (slowloris)", [=](int i) {
                 const std::string head = "POST " + chat + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: applic";
                 return head.substr(0, 1 + static_cast<std::size_t>(i) % head.size());
               },
               true});
  v.push_back({"Content-Length lies", [=](int i) {
                 const char* lengths[] = {"-1", "99999999999999999999", "abc", "17179869184"};
                 return "POST " + chat + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: " + lengths[i % 4] + "\r\n\r\n" + good;
               }});
  v.push_back({"body over the limit", [=](int) {  // claims 17 MiB (atlas-serve's limit is 16 MiB), sends 64 KiB
                 return "POST " + chat + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(17u << 20) +
                        "\r\n\r\n" + std::string(1u << 16, ' ');
               },
               true});
  v.push_back({"bad chunked encoding", [=](int i) {
                 const char* chunks[] = {"zz\r\nabc\r\n0\r\n\r\n", "ffffffffffffffff\r\nabc\r\n", "5\r\nab\r\n0\r\n\r\n"};
                 return "POST " + chat + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks[i % 3];
               },
               true});
  v.push_back({"garbage request line", [=](int i) {
                 const char* lines[] = {"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", "GET\r\n\r\n", "POST /v1/chat/completions HTTP/9.9\r\n\r\n",
                                        "BREW /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", "GET /../../etc/passwd HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"};
                 return std::string(lines[i % 5]);
               },
               true});
  v.push_back({"huge header", [=](int) { return "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + std::string(1u << 20, 'a') + "\r\n\r\n"; }, true});
  v.push_back({"header flood", [=](int) {  // 256 KiB of small headers: cut off at 64 KiB, never stored
                 std::string h = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
                 for (int k = 0; h.size() < (256u << 10); ++k) h += "X-F" + std::to_string(k) + ": v\r\n";
                 return h + "\r\n";
               },
               true});
  v.push_back({"huge URL", [=](int i) { return "GET /health?q=" + std::string(i % 2 ? 20000 : 200000, 'a') + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"; }, true});
  v.push_back({"wrong method or route", [=](int i) {
                 const char* lines[] = {"DELETE /v1/models HTTP/1.1", "PUT /v1/chat/completions HTTP/1.1", "GET /v1/completions HTTP/1.1",
                                        "OPTIONS * HTTP/1.1", "CONNECT 127.0.0.1:22 HTTP/1.1", "G\x01T /health HTTP/1.1"};
                 return std::string(lines[i % 6]) + "\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
               },
               true});
  v.push_back({"connect, then close", [=](int) { return std::string(); }, true});
  v.push_back({"pipelined bad requests", [=](int) {  // 64 on one keep-alive connection
                 std::string b;
                 for (int k = 0; k < 64; ++k) {
                   const std::string body = R"({"model": "stories", "prompt": )";
                   b += "POST " + comp + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
                 }
                 return b;
               },
               true});
  // Valid HTTP and JSON asking for huge work: a 400 naming the field.
  v.push_back({"max_tokens 10^9", [=](int) { return post(comp, R"({"model": "stories", "prompt": "x", "max_tokens": 1000000000})"); }, false, "max_tokens"});
  v.push_back({"n 10^9", [=](int) { return post(comp, R"({"model": "stories", "prompt": "x", "n": 1000000000})"); }, false, "n"});
  v.push_back({"prompt over the context", [=](int i) {
                 std::string words;
                 for (int k = 0; k < 3000; ++k) words += "Once upon a time ";
                 return i % 2 ? post(comp, R"({"model": "stories", "prompt": ")" + words + R"("})")
                              : post(chat, R"({"model": "stories", "messages": [{"role": "user", "content": ")" + words + R"("}]})");
               },
               false, "PROMPT_OR_MESSAGES"});
  v.push_back({"many stop strings", [=](int) {
                 std::string stops;
                 for (int k = 0; k < 10000; ++k) stops += (k ? ", \"s" : "\"s") + std::to_string(k) + "\"";
                 return post(comp, R"({"model": "stories", "prompt": "x", "stop": [)" + stops + "]}");
               },
               false, "stop"});
  v.push_back({"huge logit_bias", [=](int) {
                 std::string lb;
                 for (int k = 0; k < 20000; ++k) lb += (k ? ", \"" : "\"") + std::to_string(k) + "\": -100";
                 return post(comp, R"({"model": "stories", "prompt": "x", "logit_bias": {)" + lb + "}}");
               },
               false, "logit_bias"});
  return v;
}

/// The server's resident memory (VmRSS, KiB) at three points of the burst.
struct BurstRss {
  long warm = -1;   ///< after the warm-up requests
  long burst = -1;  ///< after all of them
  long end = -1;    ///< after the slow clients
};

/// Starts atlas-serve, sends it the burst, the one-off and the slow clients with every check on
/// them, stops it, and returns its RSS at the three points (judged by the memory case only).
BurstRss run_hostile_burst(const std::string& exe) {
  // glibc gives threads their own malloc arenas as they first allocate; with 64 HTTP threads
  // taking turns that growth would swamp a per-request leak. Two arenas make RSS a leak signal.
  ::setenv("MALLOC_ARENA_MAX", "2", 1);
  atlas::test::ServeProcess server(exe, {"--model", atlas::test::stories_bin().string(), "--tokenizer", atlas::test::stories_tok().string(),
                                         "--served-model-name", "stories", "--queue-limit", "2", "--threads", "1",
                                         "--request-timeout", "1", "--keep-alive-timeout", "1"});
  const int port = std::stoi(server.url.substr(server.url.rfind(':') + 1));
  const pid_t pid = server.child.pid;
  REQUIRE(health(port) == 200);

  const auto kinds = hostile_requests();
  constexpr int kRequests = 1000, kWarmup = 200;
  std::map<std::string, std::map<int, int>> outcomes;  // kind -> status (0 = closed) -> count
  long rss_warm = -1;
  int bad_outcomes = 0;
  for (int i = 0; i < kRequests; ++i) {
    const Hostile& h = kinds[static_cast<std::size_t>(i) % kinds.size()];
    const int rep = i / static_cast<int>(kinds.size());
    Conn c(port);
    c.send(h.request(rep));
    if (h.cut) c.shutdown_write();
    bool timed_out = false;
    const std::string r = c.read_all(15000, timed_out);
    const int status = timed_out ? -1 : status_of(r);
    ++outcomes[h.name][status];
    if (!(status == 0 || (status >= 400 && status < 500))) {
      ++bad_outcomes;
      CAPTURE(h.name);
      CAPTURE(rep);
      CAPTURE(r.substr(0, 300));
      CHECK_MESSAGE(false, "status " << status << " (-1: no answer within 15 s)");
    }
    if (!h.param.empty()) {
      // PROMPT_OR_MESSAGES: the prompt field of the route the request went to.
      const std::string param = h.param != "PROMPT_OR_MESSAGES" ? h.param : r.find("\"param\":\"prompt\"") != std::string::npos ? "prompt" : "messages";
      CAPTURE(h.name);
      CAPTURE(r.substr(0, 400));
      CHECK(status == 400);
      CHECK(r.find("\"param\":\"" + param + "\"") != std::string::npos);
    }
    if (i % 50 == 49) REQUIRE_MESSAGE(health(port) == 200, "after request " << i + 1);
    if (i + 1 == kWarmup) rss_warm = rss_kib(pid);
  }
  const long rss_burst = rss_kib(pid);  // before the one-off below and the slow clients' threads
  {
    // One object of 200,000 members: nlohmann's ordered parse was quadratic in them (20,000
    // took 400 ms; this one minutes). A 400 naming logit_bias within the 15 s bound.
    std::string lb;
    for (int k = 0; k < 200000; ++k) lb += (k ? ", \"" : "\"") + std::to_string(k) + "\": -100";
    Conn c(port);
    c.send(post("/v1/completions", R"({"model": "stories", "prompt": "x", "logit_bias": {)" + lb + "}}"));
    bool timed_out = false;
    const std::string r = c.read_all(15000, timed_out);
    CHECK_MESSAGE(!timed_out, "a 200,000-entry logit_bias: no answer within 15 s");
    CHECK(status_of(r) == 400);
    CHECK(r.find("\"param\":\"logit_bias\"") != std::string::npos);
  }
  for (const auto& [name, by_status] : outcomes) {
    std::string line;
    for (const auto& [s, n] : by_status) line.append(" ").append(s == 0 ? "closed" : std::to_string(s)).append(" x").append(std::to_string(n));
    MESSAGE(name << ":" << line);
  }
  CHECK(bad_outcomes == 0);


  // 200 slow clients at once, more than the 64 HTTP threads atlas-serve had (with httplib's 60 s
  // per-read timeout 65 starved /health): idle, stalled mid-headers, dripping a header byte
  // every 100 ms, stalled mid-body. /health must answer within 1 s throughout, and the server
  // must close every one of them at its 1 s deadline (--request-timeout, --keep-alive-timeout).
  {
    constexpr int kSlow = 200;
    std::vector<std::unique_ptr<Conn>> slow;
    const auto t_open = std::chrono::steady_clock::now();
    auto since = [&] { return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t_open).count(); };
    for (int k = 0; k < kSlow; ++k) {
      slow.push_back(std::make_unique<Conn>(port));
      if (k % 4 == 1 || k % 4 == 2) slow.back()->send("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
      if (k % 4 == 3) slow.back()->send("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"mo");
    }
    std::vector<long long> closed_at(kSlow, -1);
    long long worst = 0;
    // Bounds 3x looser under the sanitizers (a loaded 2-core CI box); the unfixed server's
    // worst /health was 5,073 ms and 12 of 200 slow clients were closed.
    constexpr int kSlack = atlas::test::kSanitized ? 3 : 1;
    for (bool all_closed = false; !all_closed && since() < 3000 * kSlack;) {
      const auto t0 = std::chrono::steady_clock::now();
      CHECK(health(port) == 200);
      worst = std::max<long long>(worst, std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count());
      for (int k = 0; k < kSlow; ++k) {
        if (closed_at[k] >= 0) continue;
        if (k % 4 == 2) slow[k]->send("a");
        if (slow[k]->closed()) closed_at[k] = since();
      }
      all_closed = std::count(closed_at.begin(), closed_at.end(), -1) == 0;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    int open = 0;
    long long last = 0;
    for (long long t : closed_at) {
      open += t < 0;
      last = std::max(last, t);
    }
    MESSAGE("/health with " << kSlow << " slow clients open: worst " << worst << " ms; slow clients closed by the server: "
                            << kSlow - open << " of " << kSlow << ", the last after " << last << " ms");
    CHECK(worst < 1000 * kSlack);
    CHECK(open == 0);
  }

  const long rss_end = rss_kib(pid);
  MESSAGE("server VmRSS after " << kWarmup << " requests: " << rss_warm << " KiB, after " << kRequests << ": " << rss_burst
                                << " KiB, after the slow clients: " << rss_end << " KiB");
  CHECK(health(port) == 200);
  // Under ASan, LeakSanitizer checks the server's exit: stop() returns 23, not 0, on a leak.
  CHECK(server.stop() == 0);
  return {rss_warm, rss_burst, rss_end};
}

}  // namespace

TEST_CASE("atlas-serve binary: 1,000 hostile requests each get a 4xx or a closed connection; /health answers") {
  const std::string exe = atlas::test::atlas_serve_exe();
  if (exe.empty()) return;
  atlas::test::require_data(atlas::test::stories_bin());
  (void)run_hostile_burst(exe);
}

TEST_CASE("atlas-serve binary: resident memory stays flat under 1,000 hostile requests and 200 slow clients") {
  const std::string exe = atlas::test::atlas_serve_exe();
  if (exe.empty()) return;
  // ASan holds freed memory in quarantine (up to 256 MiB), so RSS grows without a leak; there
  // LeakSanitizer judges instead, at the server's exit (the case above).
  if (atlas::test::kSanitized)
    ATLAS_SKIP("built with AddressSanitizer (tests/sanitized.hpp): its quarantine grows RSS without a leak; "
               "LeakSanitizer checks the server's exit in the hostile-requests case instead");
  atlas::test::require_data(atlas::test::stories_bin());
  const BurstRss rss = run_hostile_burst(exe);
  REQUIRE(rss.warm > 0);
  // Flat: the last 800 requests (each kind repeated 32 times) may not grow it by more than
  // 16 MiB; a leak of one body per request would add far more (deep-nesting bodies are
  // 40-250 KiB each, logit_bias ones 300 KiB). The 200 slow clients' threads (a stack each,
  // partly kept in glibc's stack cache after they exit) may add up to 48 MiB more.
  CHECK(rss.burst - rss.warm < 16 * 1024);
  CHECK(rss.end - rss.burst < 48 * 1024);
}

#endif
