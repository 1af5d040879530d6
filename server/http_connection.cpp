#include "server/http_connection.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/select.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <system_error>

#include "common/machine_error.hpp"
#include "server/error.hpp"

namespace atlas::server {

// ---- Pressure ----------------------------------------------------------------------------

Pressure::Pressure() {
  fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  // No eventfd (no descriptor left, no memory) is the machine's failure, not the request's.
  if (fd_ < 0) throw MachineError(std::string("cannot create an eventfd: ") + std::strerror(errno));
}

Pressure::~Pressure() { ::close(fd_); }

void Pressure::raise() {
  if (on_.exchange(true)) return;
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(fd_, &one, sizeof one);
}

void Pressure::lower() {
  if (!on_.exchange(false)) return;
  std::uint64_t v = 0;
  [[maybe_unused]] const ssize_t n = ::read(fd_, &v, sizeof v);  // drains: no longer readable
}

// ---- ConnectionPool ----------------------------------------------------------------------

ConnectionPool::ConnectionPool(std::size_t max_threads, std::chrono::milliseconds idle_exit, std::atomic<std::size_t>& peak,
                               Pressure& pressure)
    : max_threads_(std::max<std::size_t>(1, max_threads)), idle_exit_(idle_exit), peak_(peak), pressure_(pressure) {}

ConnectionPool::~ConnectionPool() { shutdown(); }

void ConnectionPool::join_exited(std::unique_lock<std::mutex>& lock) {
  if (exited_.empty()) return;
  std::vector<std::thread> done = std::move(exited_);
  exited_.clear();
  lock.unlock();
  for (auto& t : done) t.join();  // each has left work(): the join is immediate
  lock.lock();
}

void ConnectionPool::enqueue(std::function<void()> fn) {
  std::unique_lock lock(mu_);
  join_exited(lock);
  jobs_.push_back(std::move(fn));
  if (idle_ >= jobs_.size()) {  // enough idle threads for every queued job
    cv_.notify_one();
    return;
  }
  if (threads_.size() < max_threads_) {
    threads_.emplace_back();
    const auto self = std::prev(threads_.end());
    try {
      *self = std::thread([this, self] { work(self); });  // it waits for mu_, which we hold
    } catch (const std::system_error&) {
      // No thread to be had (a process or memory limit): this runs on httplib's accept loop,
      // which must not throw. The job waits for a running thread; with none, for the next
      // enqueue to try again.
      threads_.erase(self);
      return;
    }
    std::size_t seen = peak_.load();
    while (threads_.size() > seen && !peak_.compare_exchange_weak(seen, threads_.size())) {
    }
  } else {
    // Every thread is busy and the cap is reached: the job waits for a free thread, and the
    // connections in slow phases get short deadlines until none waits (Pressure).
    pressure_.raise();
  }
}

void ConnectionPool::work(std::list<std::thread>::iterator self) {
  std::unique_lock lock(mu_);
  for (;;) {
    if (jobs_.empty()) {
      if (shutdown_) break;
      ++idle_;
      const bool woke = cv_.wait_for(lock, idle_exit_, [&] { return !jobs_.empty() || shutdown_; });
      --idle_;
      if (!woke) break;  // idle for idle_exit: give the thread back
      continue;
    }
    std::function<void()> fn = std::move(jobs_.front());
    jobs_.pop_front();
    if (jobs_.empty()) pressure_.lower();
    lock.unlock();
    fn();
    fn = nullptr;  // the connection's state is released outside the lock
    lock.lock();
  }
  exited_.push_back(std::move(*self));  // joined by the next enqueue() or by shutdown()
  threads_.erase(self);
  cv_.notify_all();  // shutdown() waits for threads_ to empty
}

void ConnectionPool::shutdown() {
  std::unique_lock lock(mu_);
  shutdown_ = true;
  cv_.notify_all();
  // Workers run the queued jobs first (each closes its socket at once: the server is stopping).
  cv_.wait(lock, [&] { return threads_.empty(); });
  std::vector<std::thread> done = std::move(exited_);
  exited_.clear();
  lock.unlock();
  for (auto& t : done) t.join();
}

// ---- DeadlineStream ----------------------------------------------------------------------

namespace {
thread_local DeadlineStream* t_stream = nullptr;

int clamp_ms(DeadlineStream::Clock::duration d) {
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(d).count();
  return static_cast<int>(std::clamp<long long>(ms, 0, INT_MAX));
}

void ip_and_port(const sockaddr_storage& a, std::string& ip, int& port) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(a);
    ::inet_ntop(AF_INET, &v4.sin_addr, buf, sizeof buf);
    port = ntohs(v4.sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(a);
    ::inet_ntop(AF_INET6, &v6.sin6_addr, buf, sizeof buf);
    port = ntohs(v6.sin6_port);
  }
  ip = buf;
}
}  // namespace

DeadlineStream::DeadlineStream(int fd, const ConnectionLimits& limits, int wake_fd, const Pressure* pressure, std::size_t max_body_bytes,
                               int abort_fd)
    : fd_(fd),
      limits_(limits),
      wake_fd_(wake_fd),
      abort_fd_(abort_fd),
      pressure_(pressure),
      body_limit_(max_body_bytes == 0 ? 0 : max_body_bytes + body_allowance(max_body_bytes)),
      buf_(16u << 10) {}

DeadlineStream::Clock::time_point DeadlineStream::deadline(bool pressed) const {
  using std::chrono::milliseconds;
  auto ms = [&](int normal, int under_pressure) { return milliseconds(pressed ? std::min(normal, under_pressure) : normal); };
  switch (phase_) {
    case Phase::idle: return phase_start_ + ms(limits_.idle_timeout_ms, limits_.pressure_idle_ms);
    case Phase::headers: return phase_start_ + ms(limits_.header_timeout_ms, limits_.pressure_request_ms);
    case Phase::body: {
      // mod_reqtimeout's MinRate: every min_body_rate bytes received buy one more second.
      const auto credit = std::chrono::duration<double>(static_cast<double>(phase_bytes_) / static_cast<double>(std::max<std::size_t>(1, limits_.min_body_rate)));
      return phase_start_ + ms(limits_.body_timeout_ms, limits_.pressure_request_ms) + std::chrono::duration_cast<Clock::duration>(credit);
    }
  }
  return phase_start_;
}

bool DeadlineStream::wait_readable() const {
  for (;;) {
    // One reading of the pressure per pass: the deadline and whether to watch its eventfd
    // must agree (a rise between two readings would be missed until the old deadline).
    const bool pressed = pressure_ != nullptr && pressure_->on();
    const auto left = deadline(pressed) - Clock::now();
    if (left <= Clock::duration::zero()) {
      deadline_hit_ = true;
      return false;
    }
    // Without pressure, its eventfd wakes us when it rises (the deadline then shrinks); under
    // pressure it stays readable, so it is left out.
    const bool watch_pressure = pressure_ != nullptr && !pressed;
    pollfd p[3] = {{fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}, {watch_pressure ? pressure_->fd() : -1, POLLIN, 0}};
    const int n = ::poll(p, 3, clamp_ms(left));  // a negative fd is ignored
    if (n < 0 && errno != EINTR) return false;
    if (n <= 0) continue;  // interrupted or the deadline: the loop re-checks
    if (p[1].revents & POLLIN) return false;  // the server is stopping
    if (p[0].revents != 0) return true;       // data, EOF or an error: recv says which
    // else the pressure rose: the loop recomputes the deadline
  }
}

bool DeadlineStream::wait_for_request() {
  phase_ = Phase::idle;
  phase_start_ = Clock::now();
  phase_bytes_ = 0;
  if (off_ == len_ && !wait_readable()) return false;
  phase_ = Phase::headers;
  phase_start_ = Clock::now();
  return true;
}

void DeadlineStream::begin_body() {
  phase_ = Phase::body;
  phase_start_ = Clock::now();
  phase_bytes_ = 0;
}

bool DeadlineStream::is_readable() const { return off_ < len_ || wait_readable(); }

ssize_t DeadlineStream::read(char* ptr, size_t size) {
  if (phase_ == Phase::headers && phase_bytes_ >= limits_.max_header_bytes) {  // a header flood
    header_overflow_ = true;
    return -1;
  }
  // httplib 0.11.4 applies payload_max_length to Content-Length only: a chunked body, or a
  // POST read until EOF, grew req.body without bound. Count the body's bytes here.
  if (phase_ == Phase::body && body_limit_ != 0 && phase_bytes_ >= body_limit_) {
    body_overflow_ = true;
    return -1;
  }
  if (off_ == len_) {
    if (!wait_readable()) return -1;
    ssize_t n = 0;
    do {
      n = ::recv(fd_, buf_.data(), buf_.size(), 0);
    } while (n < 0 && errno == EINTR);
    if (n <= 0) return n;  // 0: the client closed; -1: an error
    off_ = 0;
    len_ = static_cast<std::size_t>(n);
  }
  std::size_t n = std::min(size, len_ - off_);
  if (phase_ == Phase::headers) n = std::min(n, limits_.max_header_bytes - phase_bytes_);
  if (phase_ == Phase::body && body_limit_ != 0) n = std::min(n, body_limit_ - phase_bytes_);
  std::memcpy(ptr, buf_.data() + off_, n);
  off_ += n;
  phase_bytes_ += n;
  return static_cast<ssize_t>(n);
}

bool DeadlineStream::wait_writable() const {
  // The abort pipe ends the wait too: once the server stops past its drain timeout, a client
  // that does not read must not hold its thread for write_timeout.
  pollfd p[2] = {{fd_, POLLOUT, 0}, {abort_fd_, POLLIN, 0}};  // a negative fd is ignored
  int n = 0;
  do {
    n = ::poll(p, 2, limits_.write_timeout_ms);
  } while (n < 0 && errno == EINTR);
  return n > 0 && !(p[1].revents & POLLIN) && (p[0].revents & POLLOUT);  // else no progress for write_timeout, an error, or stop
}

bool DeadlineStream::is_writable() const { return wait_writable() && !peer_closed(); }

ssize_t DeadlineStream::write(const char* ptr, size_t size) {
  if (!wait_writable()) return -1;
  ssize_t w = 0;
  do {
    w = ::send(fd_, ptr, size, MSG_NOSIGNAL);
  } while (w < 0 && errno == EINTR);
  return w;
}

bool DeadlineStream::peer_closed() const {
  if (off_ < len_) return false;  // a pipelined request is waiting: the client is there
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, 0) <= 0) return false;
  char c = 0;
  const ssize_t n = ::recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

void DeadlineStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if (::getpeername(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0) ip_and_port(a, ip, port);
}

void DeadlineStream::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0) ip_and_port(a, ip, port);
}

// httplib 0.11.4 is built without CPPHTTPLIB_USE_POLL and answers 500 to a stream whose
// descriptor is >= FD_SETSIZE (its select() cannot wait on it). This stream waits with poll(),
// so it reports no descriptor there rather than fail connections beyond the 1,024th fd.
socket_t DeadlineStream::socket() const { return fd_ < FD_SETSIZE ? fd_ : INVALID_SOCKET; }

// ---- HttpServer --------------------------------------------------------------------------

HttpServer::HttpServer(ConnectionLimits limits) : limits_(limits) {
  if (::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0 || ::pipe2(abort_, O_CLOEXEC | O_NONBLOCK) != 0) {
    throw MachineError(std::string("cannot create a pipe: ") + std::strerror(errno));  // the machine's failure: exit 4
  }
  // The accept loop sets these as SO_RCVTIMEO/SO_SNDTIMEO; DeadlineStream waits with poll()
  // before every recv/send, so they are a backstop only.
  set_read_timeout(std::max(1, limits_.header_timeout_ms / 1000));
  set_write_timeout(std::max(1, limits_.write_timeout_ms / 1000));
  // Only the Keep-Alive response header reads this (our loop applies idle_timeout_ms): advertise
  // the real idle timeout, rounded down, instead of httplib's default 5 s.
  set_keep_alive_timeout(limits_.idle_timeout_ms / 1000);
  new_task_queue = [this] {
    return new ConnectionPool(limits_.max_connections, std::chrono::milliseconds(limits_.thread_idle_exit_ms), peak_threads_, pressure_);
  };
}

HttpServer::~HttpServer() {
  for (int fd : {wake_[0], wake_[1], abort_[0], abort_[1]})
    if (fd >= 0) ::close(fd);
}

void HttpServer::set_backlog(int backlog) {
  const socket_t s = svr_sock_;
  if (s != INVALID_SOCKET) ::listen(s, backlog);  // Linux updates a listening socket's backlog
}

void HttpServer::close_connections() {
  const char b = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_[1], &b, 1);  // never drained: stays readable
}

void HttpServer::abort_writes() {
  const char b = 1;
  [[maybe_unused]] const ssize_t n = ::write(abort_[1], &b, 1);  // never drained: stays readable
}

bool HttpServer::current_client_gone() { return t_stream != nullptr && t_stream->peer_closed(); }

void HttpServer::close_current_after_response() {
  if (t_stream != nullptr) t_stream->close_after_response();
}

bool HttpServer::current_body_too_large() { return t_stream != nullptr && t_stream->body_too_large(); }

void HttpServer::lingering_close(socket_t sock) const {
  ::shutdown(sock, SHUT_WR);  // the response is complete: FIN after it
  const auto end = DeadlineStream::Clock::now() + std::chrono::milliseconds(limits_.linger_ms);
  std::vector<char> sink(64u << 10);
  std::size_t discarded = 0;
  while (discarded < limits_.linger_max_bytes) {
    const auto left = end - DeadlineStream::Clock::now();
    if (left <= DeadlineStream::Clock::duration::zero()) break;
    pollfd p[2] = {{sock, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    const int n = ::poll(p, 2, clamp_ms(left));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || (p[1].revents & POLLIN)) break;  // the linger time is over, or the server stops
    const ssize_t r = ::recv(sock, sink.data(), sink.size(), MSG_DONTWAIT);
    if (r < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (r <= 0) break;  // the client closed (it has read the response) or an error
    discarded += static_cast<std::size_t>(r);
  }
}

bool HttpServer::process_and_close_socket(socket_t sock) {
  bool ret = false;
  bool linger = false;
  {
    DeadlineStream strm(sock, limits_, wake_[0], &pressure_, payload_max_length_, abort_[0]);
    t_stream = &strm;
    std::size_t count = keep_alive_max_count_;
    while (svr_sock_ != INVALID_SOCKET && count > 0 && strm.wait_for_request()) {
      bool closed = false;
      ret = process_request(strm, count == 1, closed, [&strm](httplib::Request&) { strm.begin_body(); });
      // A body cut off by its deadline, or headers cut off at max_header_bytes, got httplib's
      // 400; what the client sends next is no request boundary, so the connection ends here.
      if (!ret || closed || strm.close_requested() || strm.broken()) {
        // Answered before the body was read (413, 411), or the body stopped at its limit: the
        // client may still be sending it.
        linger = ret && (strm.close_requested() || strm.body_too_large());
        break;
      }
      --count;
    }
    t_stream = nullptr;
  }
  if (linger && svr_sock_ != INVALID_SOCKET) lingering_close(sock);
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ret;
}

}  // namespace atlas::server
