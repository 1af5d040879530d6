#include "suites/endpoint/http_client.hpp"

#include <algorithm>
#include <cctype>
#include <mutex>
#include <vector>

#include <unistd.h>

#include "common/clock.hpp"
#include "suites/endpoint/rx_timestamp.hpp"

#if ATLAS_HAVE_CURL
#include <curl/curl.h>
#endif

namespace atlas::suites::endpoint {

#if ATLAS_HAVE_CURL

namespace {
constexpr std::size_t kMaxCollectedBody = 64u << 20;
constexpr std::size_t kMaxErrorBody = 64u << 10;
constexpr std::size_t kPeekScratch = 64u << 10;  // more waiting than this: read time is used

void global_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string ms_text(std::chrono::milliseconds ms) { return std::to_string(ms.count()) + " ms"; }

/// The client's open connections (kept alive between requests), for the poll loop to peek at.
struct Connections {
  std::vector<curl_socket_t> sockets;
  std::vector<char> peek_scratch = std::vector<char>(kPeekScratch);
};

// Every connection gets kernel receive timestamps, and is tracked so the poll loop can peek at
// it. curl copies the close callback into each connection when it opens it, so connections
// kept alive across curl_easy_reset() still report their close.
int on_socket_opened(void* user, curl_socket_t fd, curlsocktype purpose) {
  auto* h = static_cast<Connections*>(user);
  if (purpose == CURLSOCKTYPE_IPCXN && enable_rx_timestamps(fd)) h->sockets.push_back(fd);
  return CURL_SOCKOPT_OK;
}

int on_socket_close(void* user, curl_socket_t fd) {
  auto* h = static_cast<Connections*>(user);
  std::erase(h->sockets, fd);
  return ::close(fd);
}

/// What waits on the transfer's connection (`active`, when curl names it; else on every
/// connection the client holds): the byte count and the kernel receive time of the newest, 0
/// when any waiting bytes lack one. Only the active socket counts when known: bytes waiting on
/// an idle keep-alive connection must not inflate what the transfer's reads may be stamped with.
PendingBytes peek_connections(Connections& h, curl_socket_t active) {
  PendingBytes all;
  bool timed = true;
  const bool known = active != CURL_SOCKET_BAD &&
                     std::find(h.sockets.begin(), h.sockets.end(), active) != h.sockets.end();
  for (curl_socket_t fd : h.sockets) {
    if (known && fd != active) continue;
    const PendingBytes p = peek_pending(fd, h.peek_scratch);
    if (p.bytes == 0) continue;
    all.bytes += p.bytes;
    all.arrival_ns = std::max(all.arrival_ns, p.arrival_ns);
    timed = timed && p.arrival_ns > 0;
  }
  if (!timed) all.arrival_ns = 0;
  return all;
}
}  // namespace

struct HttpClient::Handles {
  CURLM* multi = nullptr;
  CURL* easy = nullptr;
  Connections connections;
};

bool http_client_available() { return true; }

HttpClient::HttpClient() : h_(std::make_unique<Handles>()) {
  global_init_once();
  h_->multi = curl_multi_init();
  h_->easy = curl_easy_init();
}

HttpClient::~HttpClient() {
  if (h_->easy) curl_easy_cleanup(h_->easy);
  if (h_->multi) curl_multi_cleanup(h_->multi);
}

namespace {
struct Transfer {
  HttpClient* client = nullptr;
  CURL* easy = nullptr;
  const OnBody* on_body = nullptr;
  HttpResponse* res = nullptr;
  std::int64_t t_last_byte_ns = 0;
  PendingBytes peeked;            ///< what waited when the poll loop last peeked
  std::size_t read_since_peek = 0;  ///< bytes the callbacks got since then
  std::uint64_t wake = 0;         ///< poll wake-ups so far (the OnBody `wake`)
  bool aborted = false;
  bool status_known = false;
  bool success_status = false;
};

/// When the `len` bytes a callback got reached this host: the peeked kernel time while the
/// callbacks since the peek have not got more bytes than the peek saw (bounded below by the
/// send: nothing of a response precedes its request), else the read time. curl keeps reading
/// within one curl_multi_perform while the socket has data, so bytes that landed after the peek
/// must not take its (earlier) time. The count is of decoded body bytes, which chunked framing
/// makes a few bytes fewer per chunk than the socket's: only a fragment of at most that size
/// landing after the peek could take its time, early by the peek-to-read gap (microseconds).
std::int64_t arrival_ns(Transfer& t, std::size_t len) {
  t.read_since_peek += len;
  if (t.peeked.arrival_ns > 0 && t.read_since_peek <= t.peeked.bytes) {
    ++t.res->kernel_stamped_reads;
    return std::max(t.peeked.arrival_ns, t.res->t_sent_ns);
  }
  ++t.res->user_stamped_reads;
  return atlas::now_ns();
}

std::size_t on_header(char* data, std::size_t size, std::size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::int64_t now = arrival_ns(*t, size * n);
  if (t->res->t_first_byte_ns == 0) t->res->t_first_byte_ns = now;
  t->t_last_byte_ns = now;
  std::string_view line(data, size * n);
  // A new status line starts a new response (after a 1xx); the last one counts.
  if (line.rfind("HTTP/", 0) == 0) t->status_known = false;
  constexpr std::string_view kCt = "content-type:";
  if (line.size() > kCt.size()) {
    std::string lower(line.substr(0, kCt.size()));
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    if (lower == kCt) {
      auto v = line.substr(kCt.size());
      while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
      while (!v.empty() && (v.back() == '\r' || v.back() == '\n' || v.back() == ' ')) v.remove_suffix(1);
      t->res->content_type.assign(v);
    }
  }
  return size * n;
}

std::size_t on_write(char* data, std::size_t size, std::size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::int64_t now = arrival_ns(*t, size * n);
  const std::size_t len = size * n;
  t->t_last_byte_ns = now;
  t->res->body_bytes += len;
  if (!t->status_known) {
    long status = 0;
    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
    t->res->status = status;
    t->success_status = status >= 200 && status < 300;
    t->status_known = true;
  }
  std::string_view bytes(data, len);
  if (!t->success_status) {
    if (t->res->body.size() < kMaxErrorBody) t->res->body.append(bytes.substr(0, kMaxErrorBody - t->res->body.size()));
    return len;
  }
  if (*t->on_body) {
    if (!(*t->on_body)(bytes, now, t->wake)) {
      t->aborted = true;
      return 0;  // CURLE_WRITE_ERROR
    }
    return len;
  }
  if (t->res->body.size() + len > kMaxCollectedBody) {
    t->aborted = true;
    t->client->set_abort_reason("response body exceeds " + std::to_string(kMaxCollectedBody) + " bytes");
    return 0;
  }
  t->res->body.append(bytes);
  return len;
}
}  // namespace

HttpResponse HttpClient::perform(const HttpRequest& req, const OnBody& on_body) {
  HttpResponse res;
  abort_reason_.clear();
  CURL* easy = h_->easy;
  if (!easy || !h_->multi) {
    res.error = "libcurl initialisation failed";
    return res;
  }
  curl_easy_reset(easy);  // keeps live connections (keep-alive across requests)
  char errbuf[CURL_ERROR_SIZE] = {0};
  Transfer t;
  t.client = this;
  t.easy = easy;
  t.on_body = &on_body;
  t.res = &res;

  curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, "Expect:");  // no 100-continue: it would fake the first byte
  if (req.method == "POST") headers = curl_slist_append(headers, "Content-Type: application/json");
  for (const auto& h : req.headers) headers = curl_slist_append(headers, h.c_str());

  curl_easy_setopt(easy, CURLOPT_URL, req.url.c_str());
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(req.timeouts.connect.count()));
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(req.timeouts.total.count()));
  curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(easy, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_write);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(easy, CURLOPT_SOCKOPTFUNCTION, on_socket_opened);
  curl_easy_setopt(easy, CURLOPT_SOCKOPTDATA, &h_->connections);
  curl_easy_setopt(easy, CURLOPT_CLOSESOCKETFUNCTION, on_socket_close);
  curl_easy_setopt(easy, CURLOPT_CLOSESOCKETDATA, &h_->connections);
  if (req.method == "POST") {
    curl_easy_setopt(easy, CURLOPT_POST, 1L);
    curl_easy_setopt(easy, CURLOPT_POSTFIELDS, req.body.data());
    curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
  } else {
    curl_easy_setopt(easy, CURLOPT_HTTPGET, 1L);
  }

  curl_multi_add_handle(h_->multi, easy);
  res.t_sent_ns = atlas::now_ns();
  const std::int64_t first_byte_ns = req.timeouts.first_byte.count() * 1'000'000;
  const std::int64_t idle_ns = req.timeouts.idle.count() * 1'000'000;
  const std::int64_t total_ns = req.timeouts.total.count() * 1'000'000;
  std::string timeout_error;
  int running = 1;
  while (true) {
    ++t.wake;
    const CURLMcode mc = curl_multi_perform(h_->multi, &running);
    t.peeked = {};
    if (mc != CURLM_OK) break;
    if (!running || t.aborted) break;
    const std::int64_t now = atlas::now_ns();
    std::int64_t wait_ns;
    if (res.t_first_byte_ns == 0) {
      if (now - res.t_sent_ns >= first_byte_ns) {
        timeout_error = "no response byte within the first-byte timeout of " + ms_text(req.timeouts.first_byte);
        break;
      }
      wait_ns = res.t_sent_ns + first_byte_ns - now;
    } else {
      if (now - t.t_last_byte_ns >= idle_ns) {
        timeout_error = "server stalled: no byte for " + ms_text(req.timeouts.idle) + " (idle timeout) after " +
                        std::to_string(res.body_bytes) + " body bytes";
        break;
      }
      wait_ns = t.t_last_byte_ns + idle_ns - now;
    }
    if (now - res.t_sent_ns >= total_ns) {
      timeout_error = "request exceeded the total timeout of " + ms_text(req.timeouts.total);
      break;
    }
    wait_ns = std::min(wait_ns, res.t_sent_ns + total_ns - now);
    const int wait_ms = static_cast<int>(std::clamp<std::int64_t>((wait_ns + 999'999) / 1'000'000, 1, 1000));
    curl_multi_poll(h_->multi, nullptr, 0, wait_ms, nullptr);
    curl_socket_t active = CURL_SOCKET_BAD;
    if (curl_easy_getinfo(easy, CURLINFO_ACTIVESOCKET, &active) != CURLE_OK) active = CURL_SOCKET_BAD;
    t.peeked = peek_connections(h_->connections, active);  // right before curl reads what woke the poll
    t.read_since_peek = 0;
  }
  res.t_end_ns = atlas::now_ns();

  CURLcode code = CURLE_OK;
  bool finished = false;
  int msgs = 0;
  while (CURLMsg* m = curl_multi_info_read(h_->multi, &msgs)) {
    if (m->msg == CURLMSG_DONE && m->easy_handle == easy) {
      code = m->data.result;
      finished = true;
    }
  }
  if (res.status == 0) curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &res.status);
  curl_multi_remove_handle(h_->multi, easy);
  curl_slist_free_all(headers);

  if (!timeout_error.empty()) {
    res.error = timeout_error;
  } else if (t.aborted) {
    res.error = abort_reason_.empty() ? "transfer aborted by the client" : abort_reason_;
  } else if (!finished) {
    res.error = "transfer did not complete (curl multi interface error)";
  } else if (code != CURLE_OK) {
    res.error = std::string("curl: ") + (errbuf[0] ? errbuf : curl_easy_strerror(code));
    if (code == CURLE_OPERATION_TIMEDOUT) res.error += " (total timeout " + ms_text(req.timeouts.total) + ")";
  } else if (res.status < 200 || res.status >= 300) {
    res.error = "HTTP " + std::to_string(res.status);
    if (!res.body.empty()) res.error += ": " + res.body.substr(0, 2000);
  } else {
    res.ok = true;
  }
  return res;
}

#else  // !ATLAS_HAVE_CURL

struct HttpClient::Handles {};
bool http_client_available() { return false; }
HttpClient::HttpClient() : h_(std::make_unique<Handles>()) {}
HttpClient::~HttpClient() = default;
HttpResponse HttpClient::perform(const HttpRequest&, const OnBody&) {
  HttpResponse res;
  res.error = "atlas-bench was built without libcurl: endpoint targets are unavailable";
  return res;
}

#endif

}  // namespace atlas::suites::endpoint
