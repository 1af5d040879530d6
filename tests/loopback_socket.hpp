#pragma once
// A raw TCP connection to a server on 127.0.0.1, for tests that send what an HTTP client library
// would refuse to (partial requests, lying headers, pipelined garbage). Connects in the
// constructor (REQUIRE), closes in the destructor; tests add their own ways of reading.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <string_view>

namespace atlas::test {

class LoopbackSocket {
 public:
  explicit LoopbackSocket(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  }
  ~LoopbackSocket() { close(); }
  LoopbackSocket(const LoopbackSocket&) = delete;
  LoopbackSocket& operator=(const LoopbackSocket&) = delete;

  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  /// Sends all of `s`; false once a send fails (the server closed or reset the connection).
  bool send(std::string_view s) {
    while (!s.empty()) {
      const ssize_t n = ::send(fd_, s.data(), s.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      s.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }
  int fd() const { return fd_; }

 protected:
  int fd_ = -1;
};

}  // namespace atlas::test
