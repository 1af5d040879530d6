#include "engine/decode_delay.hpp"

#include <sys/prctl.h>
#include <time.h>

#include <algorithm>

#include "common/clock.hpp"

namespace atlas::engine {

void DecodeDelay::on_decode_step() {
  if (us_ <= 0) return;
  on_decode_step([this](std::int64_t ns) {
    if (!slack_set_) {
      ::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);  // this thread only; best effort
      slack_set_ = true;
    }
    const std::int64_t t0 = atlas::now_ns();
    timespec ts{static_cast<time_t>(ns / 1'000'000'000LL), static_cast<long>(ns % 1'000'000'000LL)};
    while (::nanosleep(&ts, &ts) != 0) {
    }
    return atlas::now_ns() - t0;
  });
}

void DecodeDelay::on_decode_step(const SleepFn& sleep) {
  if (us_ <= 0) return;
  debt_ns_ += us_ * 1e3;
  if (debt_ns_ < kMinSleepNs) return;
  const auto slept = sleep(static_cast<std::int64_t>(debt_ns_));
  debt_ns_ = std::max(debt_ns_ - static_cast<double>(slept), -kMinSleepNs);
}

}  // namespace atlas::engine
