#include "server/decode_queue.hpp"

#include <chrono>

namespace atlas::server {

DecodeQueue::Ticket::~Ticket() {
  if (q_) q_->leave(n_);
}

bool DecodeQueue::Ticket::wait_turn(const std::function<bool()>& give_up) {
  std::unique_lock lock(q_->mu_);
  if (!give_up) {
    q_->cv_.wait(lock, [&] { return q_->serving_ == n_; });
    return true;
  }
  while (!q_->cv_.wait_for(lock, std::chrono::milliseconds(20), [&] { return q_->serving_ == n_; })) {
    lock.unlock();
    const bool stop = give_up();
    lock.lock();
    if (stop && q_->serving_ != n_) return false;
  }
  return true;
}

std::optional<DecodeQueue::Ticket> DecodeQueue::try_enter() {
  std::lock_guard lock(mu_);
  if (admitted_ >= 1 + limit_) return std::nullopt;
  ++admitted_;
  return Ticket(this, next_++);
}

int DecodeQueue::admitted() const {
  std::lock_guard lock(mu_);
  return admitted_;
}

bool DecodeQueue::wait_idle(int timeout_ms) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return admitted_ == 0; });
}

void DecodeQueue::leave(std::uint64_t n) {
  {
    std::lock_guard lock(mu_);
    --admitted_;
    if (n == serving_) {
      ++serving_;
      while (left_early_.erase(serving_)) ++serving_;
    } else {
      left_early_.insert(n);
    }
  }
  cv_.notify_all();
}

}  // namespace atlas::server
