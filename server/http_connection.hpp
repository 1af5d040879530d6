#pragma once
// How atlas-serve holds client connections, so that slow or hostile clients cannot starve the
// others. cpp-httplib (Debian's 0.11.4) gives every connection a thread until it
// closes, and its only limit is a per-read idle timeout: a client that sends its headers one
// byte every few seconds held a thread for hours, and 65 stalled clients starved /health on
// the 64 threads atlas-serve had. Two changes, both behind httplib's public or protected API:
//
//  - HttpServer replaces httplib's per-connection loop (its virtual process_and_close_socket)
//    and reads through DeadlineStream, which gives each phase of a request a deadline, in the
//    manner of Apache's mod_reqtimeout: a connection waits idle_timeout for a request's first
//    byte; the request line and headers must then arrive within header_timeout and
//    max_header_bytes; the body within body_timeout after the headers, extended by one second
//    per min_body_rate bytes received; a response write that makes no progress for
//    write_timeout fails. Past a deadline the connection is closed (a body cut off by its
//    deadline gets httplib's 400 first). So a stalled or dripping client holds its connection
//    for at most idle_timeout + header_timeout (+ the body allowance).
//  - ConnectionPool (the TaskQueue) starts a thread per connection on demand, up to
//    max_connections, instead of a fixed 64; idle threads exit. Slow clients below that cap
//    cost a thread each but never make another client wait; beyond it new connections wait in
//    FIFO order for a thread, which the deadlines free within the bound above.
// The listen backlog is raised from httplib's compiled-in 5 to SOMAXCONN, so a burst of
// connects is not dropped into SYN retransmits (1 s, 3 s) before the accept loop sees it.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <list>
#include <mutex>
#include <thread>
#include <vector>

#include <httplib.h>

#include "server/connection_limits.hpp"

namespace atlas::server {

/// Raised while connections wait for a thread (the pool is at max_connections); its eventfd is
/// readable exactly while it is raised, so that connections waiting with long deadlines wake and
/// shorten them. raise() and lower() are called under the pool's lock.
class Pressure {
 public:
  Pressure();
  ~Pressure();
  Pressure(const Pressure&) = delete;
  Pressure& operator=(const Pressure&) = delete;
  void raise();
  void lower();
  bool on() const { return on_.load(std::memory_order_acquire); }
  int fd() const { return fd_; }

 private:
  std::atomic<bool> on_{false};
  int fd_ = -1;
};

/// httplib's TaskQueue with a thread per queued connection, up to `max_threads`; beyond that,
/// jobs wait FIFO. Threads idle for `idle_exit` exit. shutdown() runs the queued jobs and joins.
class ConnectionPool final : public httplib::TaskQueue {
 public:
  /// `peak` records the most threads alive at once (it outlives the pool, which httplib owns).
  ConnectionPool(std::size_t max_threads, std::chrono::milliseconds idle_exit, std::atomic<std::size_t>& peak, Pressure& pressure);
  ~ConnectionPool() override;
  void enqueue(std::function<void()> fn) override;
  void shutdown() override;

 private:
  void work(std::list<std::thread>::iterator self);
  void join_exited(std::unique_lock<std::mutex>& lock);

  const std::size_t max_threads_;
  const std::chrono::milliseconds idle_exit_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  std::list<std::thread> threads_;
  std::vector<std::thread> exited_;  // threads that left work() and wait to be joined
  std::size_t idle_ = 0;
  bool shutdown_ = false;
  std::atomic<std::size_t>& peak_;
  Pressure& pressure_;
};

/// One connection's socket as an httplib::Stream whose reads obey the current phase's deadline
/// (see the file comment). Reads are buffered (httplib reads headers a byte at a time).
class DeadlineStream final : public httplib::Stream {
 public:
  using Clock = std::chrono::steady_clock;
  /// `wake_fd` becomes readable when the server stops: every wait for input then ends.
  /// `abort_fd` (-1: none) becomes readable when the server stops past its drain timeout: every
  /// wait to write then ends too (the write fails).
  /// `max_body_bytes`: a body (chunked, or read to EOF) whose bytes on the wire pass this plus
  /// body_allowance() fails its read (body_too_large()); 0 means no limit.
  DeadlineStream(int fd, const ConnectionLimits& limits, int wake_fd, const Pressure* pressure = nullptr, std::size_t max_body_bytes = 0,
                 int abort_fd = -1);

  /// Waits up to idle_timeout for the next request's first byte; false on timeout, EOF, error
  /// or stop. Then starts the header phase.
  bool wait_for_request();
  /// The headers have been read: starts the body phase.
  void begin_body();
  /// True when the client has closed the connection (EOF or error) with nothing left to read;
  /// a handler polls this to stop decoding for a client that left.
  bool peer_closed() const;
  /// Ends the connection after the current response (a handler answered without reading the
  /// body, which must not be parsed as the next request).
  void close_after_response() { close_ = true; }
  bool close_requested() const { return close_; }
  /// Whether a read failed because its phase's deadline passed or the headers ran past
  /// max_header_bytes: what follows is no request boundary, so the connection must end.
  bool broken() const { return deadline_hit_ || header_overflow_ || body_overflow_; }
  /// Whether the body's read failed at max_body_bytes + body_allowance() bytes on the wire:
  /// httplib's Content-Length check does not cover chunked bodies or a body read to EOF.
  bool body_too_large() const { return body_overflow_; }
  /// Room for chunked framing (size lines, CRLFs, trailers) above max_body_bytes.
  static std::size_t body_allowance(std::size_t max_body_bytes) { return max_body_bytes / 16 + (64u << 10); }

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override;

 private:
  enum class Phase { idle, headers, body };
  /// Waits until the socket is readable or the phase's deadline passes (or stop).
  bool wait_readable() const;
  /// Waits until the socket takes more bytes, for up to write_timeout (false: not, or stop).
  bool wait_writable() const;
  Clock::time_point deadline(bool pressed) const;

  int fd_;
  const ConnectionLimits& limits_;
  int wake_fd_;
  int abort_fd_;
  const Pressure* pressure_;
  Phase phase_ = Phase::idle;
  Clock::time_point phase_start_{};
  std::size_t phase_bytes_ = 0;  // bytes handed to httplib in this phase
  mutable bool deadline_hit_ = false;
  bool header_overflow_ = false;
  bool body_overflow_ = false;
  std::size_t body_limit_ = 0;  // 0: none
  bool close_ = false;
  std::vector<char> buf_;
  std::size_t off_ = 0, len_ = 0;
};

/// httplib::Server with DeadlineStream connections and a ConnectionPool. Configure it as an
/// httplib::Server (routes, handlers); then bind, set_backlog(), listen_after_bind().
class HttpServer final : public httplib::Server {
 public:
  explicit HttpServer(ConnectionLimits limits);
  ~HttpServer() override;
  /// Re-listens the bound socket with this backlog (httplib's listen() uses 5).
  void set_backlog(int backlog);
  /// Ends every connection's wait for input (idle keep-alive, slow requests); call when
  /// stopping. Connections accepted afterwards close at once.
  void close_connections();
  /// Makes every wait for a client to take output end, and the write fail, from now on: for a
  /// stop past the drain timeout, so that a client that does not read cannot hold the exit
  /// back by write_timeout.
  void abort_writes();
  const ConnectionLimits& limits() const { return limits_; }
  /// The most connection threads alive at once so far.
  std::size_t peak_threads() const { return peak_threads_.load(); }
  /// For a handler: whether the client of the request this thread is serving has closed the
  /// connection (false when not called from a connection thread).
  static bool current_client_gone();
  /// For a handler: close this thread's connection after the response (see DeadlineStream).
  static void close_current_after_response();
  /// For an error handler: whether this thread's request failed because its body passed
  /// max_body_bytes on the wire (chunked or without Content-Length); httplib answers 400 there.
  static bool current_body_too_large();

 private:
  bool process_and_close_socket(socket_t sock) override;
  /// Closes a connection whose client may still be sending (a 413 before its body was read):
  /// shutdown(SHUT_WR) after the response, then read and discard for up to linger_ms or
  /// linger_max_bytes, then close, so the kernel does not answer the unread bytes with a reset
  /// that destroys the response before the client reads it.
  void lingering_close(socket_t sock) const;

  ConnectionLimits limits_;
  int wake_[2] = {-1, -1};
  int abort_[2] = {-1, -1};
  Pressure pressure_;
  std::atomic<std::size_t> peak_threads_{0};
};

}  // namespace atlas::server
