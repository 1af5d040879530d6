#pragma once
// Test hook behind BackendOptions::inject_decode_delay_us: a planted slowdown of the decode step
// that adds wall time without adding work, so it tests the gate's timed judgement and leaves
// instruction counts alone. It sleeps rather than spins: each decode step adds `us` to a debt,
// and once the debt reaches kMinSleepNs the thread sleeps for it (timer slack 1 ns on this
// thread, so a short sleep is not rounded up by the default 50 µs slack) and subtracts what the
// sleep actually took, wake-up latency included. Over a run the added time per token converges
// to `us` (fractions of a microsecond included), whatever the sleep granularity; the few
// instructions per step are the same whether or not a sleep happens. The credit an oversleep
// leaves is capped at kMinSleepNs: a sleep stretched by preemption on a loaded box (50 ms, say)
// must not cancel the delay of the next thousands of tokens (it did: a planted +20 us vanished
// from whole `ab` runs).
#include <cstdint>
#include <functional>

namespace atlas::engine {

class DecodeDelay {
 public:
  /// Sleeps are at least this long (a shorter nanosleep costs the same wake-up latency); also
  /// the most oversleep carried over as credit.
  static constexpr double kMinSleepNs = 20'000;

  /// Sleeps about `ns` and returns the nanoseconds that actually passed.
  using SleepFn = std::function<std::int64_t(std::int64_t ns)>;

  /// Microseconds per decoded token; negative values count as 0.
  void set(double us) { us_ = us > 0 ? us : 0; }
  double us() const { return us_; }
  /// One decode step: accrue the delay, sleep off the debt when it is large enough.
  void on_decode_step();
  /// The same with a given sleep (tests).
  void on_decode_step(const SleepFn& sleep);

 private:
  double us_ = 0;
  double debt_ns_ = 0;
  bool slack_set_ = false;
};

}  // namespace atlas::engine
