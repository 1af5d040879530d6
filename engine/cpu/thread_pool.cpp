#include "engine/cpu/thread_pool.hpp"

#include <algorithm>
#include <string>
#include <exception>

#include "engine/error.hpp"

namespace atlas::engine::cpu {

ThreadPool::ThreadPool(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  try {
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
  } catch (const std::exception& e) {  // std::system_error (EAGAIN), or std::bad_alloc
    // The process's thread or memory limit (RLIMIT_NPROC, RLIMIT_AS, kernel.threads-max): the
    // workers already started must be stopped and joined here, since no destructor runs for a
    // constructor that throws (a joinable std::thread destroyed unjoined calls std::terminate).
    const int started = size();
    stop_workers();
    throw EngineError("cpu backend: " + std::to_string(threads) + " threads asked for (--threads / $ATLAS_THREADS), but only " +
                      std::to_string(started) + " could be started: " + e.what() + "; ask for fewer threads");
  }
}

ThreadPool::~ThreadPool() { stop_workers(); }

void ThreadPool::stop_workers() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (auto& t : workers_) t.join();
  workers_.clear();
}

void ThreadPool::run_chunk(int worker) {
  const int units = (n_ + grain_ - 1) / grain_;
  const int per = units / size(), extra = units % size();
  const int first = worker * per + std::min(worker, extra);
  const int count = per + (worker < extra ? 1 : 0);
  const int begin = std::min(n_, first * grain_), end = std::min(n_, (first + count) * grain_);
  if (begin < end) (*job_)(worker, begin, end);
}

void ThreadPool::worker_loop(int index) {
  unsigned long seen = 0;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      start_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    run_chunk(index);
    {
      std::lock_guard lock(mutex_);
      if (--pending_ == 0) done_cv_.notify_one();
    }
  }
}

void ThreadPool::parallel_for(int n, const std::function<void(int, int, int)>& fn, int grain) {
  if (n <= 0) return;
  if (workers_.empty()) {
    fn(0, 0, n);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    job_ = &fn;
    n_ = n;
    grain_ = std::max(1, grain);
    pending_ = static_cast<int>(workers_.size());
    ++generation_;
  }
  start_cv_.notify_all();
  run_chunk(0);
  std::unique_lock lock(mutex_);
  done_cv_.wait(lock, [&] { return pending_ == 0; });
}

}  // namespace atlas::engine::cpu
