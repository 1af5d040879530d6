#pragma once
// When bytes waiting on a TCP socket reached this host, from the kernel's software receive
// timestamp (socket(7): SO_TIMESTAMPNS; tcp(7) reports it per recvmsg as SCM_TIMESTAMPNS, the
// time of the newest segment the call covered). The endpoint client stamps token arrivals
// with it instead of the time its own thread got to read them: a read that waits on the
// scheduler (a wake-up from poll() on this VM costs ~100 us, see docs/PERF.md "Endpoint client
// overhead") then no longer inflates TTFT, and a busy client process distorts timings less.
#include <cstddef>
#include <cstdint>
#include <span>

namespace atlas::suites::endpoint {

/// Asks the kernel to timestamp every segment `fd` receives. False where the platform has no
/// SO_TIMESTAMPNS or refuses it; the socket is unchanged then.
bool enable_rx_timestamps(int fd);

struct PendingBytes {
  std::size_t bytes = 0;       ///< bytes waiting to be read
  std::int64_t arrival_ns = 0; ///< atlas::now_ns() time the newest of them arrived; 0: unknown
};

/// What waits on `fd`, read with a non-consuming peek (MSG_PEEK) into `scratch`. arrival_ns is
/// 0 when nothing waits, the kernel attached no timestamp, or scratch.size() bytes or more wait
/// (the newest segment may be out of reach, so the time could be too early for some bytes); it
/// is never later than now. Rule: the kernel's time is CLOCK_REALTIME; it is moved onto the
/// steady clock by the offset between the two clocks read right after the peek (an error of
/// well under 1 us).
PendingBytes peek_pending(int fd, std::span<char> scratch);

}  // namespace atlas::suites::endpoint
