#pragma once
// Admission and ordering of requests for one engine: one request decodes at a time, up to
// `queue_limit` more wait in arrival order (FIFO tickets), the next one is refused (the server
// answers 429). A Ticket is RAII: destroying it leaves the queue, whether or not it was served.
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <set>

namespace atlas::server {

class DecodeQueue {
 public:
  explicit DecodeQueue(int queue_limit) : limit_(queue_limit) {}

  class Ticket {
   public:
    Ticket(Ticket&& o) noexcept : q_(o.q_), n_(o.n_) { o.q_ = nullptr; }
    Ticket& operator=(Ticket&&) = delete;
    Ticket(const Ticket&) = delete;
    ~Ticket();
    /// Blocks until every earlier ticket has left; then this one holds the engine. With
    /// `give_up` (asked every 20 ms while waiting), returns false as soon as it answers true
    /// (a client that left): the caller then drops the ticket without its turn.
    bool wait_turn(const std::function<bool()>& give_up = {});

   private:
    friend class DecodeQueue;
    Ticket(DecodeQueue* q, std::uint64_t n) : q_(q), n_(n) {}
    DecodeQueue* q_;
    std::uint64_t n_;
  };

  /// A ticket, or nullopt when one request is decoding and `queue_limit` are waiting.
  std::optional<Ticket> try_enter();
  /// Requests decoding or waiting.
  int admitted() const;
  /// Blocks until no request is admitted or `timeout_ms` passed; true when empty.
  bool wait_idle(int timeout_ms);

 private:
  void leave(std::uint64_t n);

  const int limit_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::uint64_t next_ = 0;
  std::uint64_t serving_ = 0;   ///< lowest ticket number still admitted
  int admitted_ = 0;
  std::set<std::uint64_t> left_early_;  ///< tickets that left before their turn; skipped
};

}  // namespace atlas::server
