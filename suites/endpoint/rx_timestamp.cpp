#include "suites/endpoint/rx_timestamp.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>

#include "common/clock.hpp"

namespace atlas::suites::endpoint {

#if defined(__linux__) && defined(SO_TIMESTAMPNS)

bool enable_rx_timestamps(int fd) {
  const int one = 1;
  return ::setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one) == 0;
}

PendingBytes peek_pending(int fd, std::span<char> scratch) {
  if (fd < 0 || scratch.empty()) return {};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec)) * 2];
  iovec iov{scratch.data(), scratch.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  const ssize_t n = ::recvmsg(fd, &msg, MSG_PEEK | MSG_DONTWAIT);
  if (n <= 0) return {};
  PendingBytes out{static_cast<std::size_t>(n), 0};
  if (out.bytes >= scratch.size()) return out;
  std::int64_t realtime_ns = 0;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
      timespec ts;
      std::memcpy(&ts, CMSG_DATA(c), sizeof ts);
      realtime_ns = static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
    }
  }
  if (realtime_ns == 0) return out;
  const std::int64_t real_now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count();
  const std::int64_t steady_now = atlas::now_ns();
  out.arrival_ns = std::min(steady_now, realtime_ns - (real_now - steady_now));
  return out;
}

#else

bool enable_rx_timestamps(int) { return false; }
PendingBytes peek_pending(int, std::span<char>) { return {}; }

#endif

}  // namespace atlas::suites::endpoint
