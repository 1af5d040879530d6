#pragma once
// A Server over the FakeGenerator on an ephemeral loopback port, for tests that set options
// first (opts), then start() it.
#include <csignal>
#include <memory>
#include <string>

#include <httplib.h>

#include "server/server.hpp"
#include "suites/endpoint/sse_parser.hpp"
#include "tests/server/fake_generator.hpp"

namespace atlas::test {

struct ServedFake {
  FakeGenerator gen;
  server::ServerOptions opts;
  std::unique_ptr<server::Server> server;
  int port = 0;

  ServedFake() {
    std::signal(SIGPIPE, SIG_IGN);
    opts.served_model_name = "fake";
  }
  void start() {
    server = std::make_unique<server::Server>(gen, opts);
    port = server->start();
  }
  /// "127.0.0.1:PORT", a Host header value the server accepts.
  std::string host() const { return "127.0.0.1:" + std::to_string(port); }
  /// POSTs `body` as application/json (10 s read timeout).
  httplib::Result post(const std::string& path, const nlohmann::json& body) const {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(10, 0);
    return c.Post(path.c_str(), body.dump(), "application/json");
  }
};

/// The JSON events of an SSE body, [DONE] left out.
inline std::vector<nlohmann::json> sse_json(const std::string& body) {
  suites::endpoint::SseParser p;
  std::vector<suites::endpoint::SseEvent> evs;
  p.feed(body, evs);
  std::vector<nlohmann::json> out;
  for (const auto& e : evs) {
    if (e.data != "[DONE]") out.push_back(nlohmann::json::parse(e.data));
  }
  return out;
}

}  // namespace atlas::test
