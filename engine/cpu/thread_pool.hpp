#pragma once
// A small persistent thread pool for the CPU forward pass: the calling thread plus size() - 1
// workers that sleep on a condition variable between jobs (the machine may be shared, so no
// spinning).
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace atlas::engine::cpu {

class ThreadPool {
 public:
  /// `threads` <= 0: std::thread::hardware_concurrency(). Throws EngineError naming how many
  /// threads were asked for and how many could be started when the process cannot create them
  /// all (the ones started are joined first).
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  /// Splits [0, n) into size() contiguous chunks (some possibly empty) and runs
  /// fn(worker, begin, end) for each, the caller taking chunk 0; returns when all are done.
  /// `grain`: the chunk boundaries are multiples of it (except n), so a kernel that works on
  /// blocks of rows keeps its blocks whole.
  void parallel_for(int n, const std::function<void(int worker, int begin, int end)>& fn, int grain = 1);

 private:
  void worker_loop(int index);
  void stop_workers();  ///< sets stop_, wakes and joins every worker
  void run_chunk(int worker);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable start_cv_, done_cv_;
  const std::function<void(int, int, int)>* job_ = nullptr;
  int n_ = 0, grain_ = 1;
  unsigned long generation_ = 0;
  int pending_ = 0;
  bool stop_ = false;
};

}  // namespace atlas::engine::cpu
