#include "engine/decode_delay.hpp"

#include <sys/prctl.h>
#include <cstdint>
#include <time.h>

#include "common/clock.hpp"

namespace atlas::engine {

void DecodeDelay::on_decode_step() {
  if (us_ <= 0) return;
  debt_ns_ += us_ * 1e3;
  if (debt_ns_ < kMinSleepNs) return;
  if (!slack_set_) {
    ::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);  // this thread only; best effort
    slack_set_ = true;
  }
  const std::int64_t t0 = atlas::now_ns();
  const auto ns = static_cast<long>(debt_ns_);
  timespec ts{ns / 1'000'000'000L, ns % 1'000'000'000L};
  while (::nanosleep(&ts, &ts) != 0) {
  }
  debt_ns_ -= static_cast<double>(atlas::now_ns() - t0);
}

}  // namespace atlas::engine
