#pragma once
// Loopback test servers for the endpoint client:
//  - ScriptServer (httplib): GET /v1/models, and POST /v1/(chat/)completions answered with a
//    scripted SSE body: each step sleeps, then writes its bytes, and the server records the
//    steady-clock time of every write (the truth the client's timestamps are checked against).
//  - RawServer (plain sockets): accepts one connection at a time and sends fixed bytes (or
//    nothing), for servers that hang or do not speak HTTP.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "common/clock.hpp"

namespace atlas::test {

struct ScriptStep {
  std::chrono::microseconds delay{0};
  std::string bytes;
};

/// "data: <json>\n\n" for a completions chunk carrying `text`.
inline std::string completion_event(const std::string& text) {
  return "data: " + nlohmann::json({{"choices", {{{"index", 0}, {"text", text}, {"finish_reason", nullptr}}}}}).dump() + "\n\n";
}

class ScriptServer {
 public:
  std::vector<ScriptStep> script;
  int status = 200;
  std::string error_body;               ///< body for a non-200 status
  std::string required_bearer;          ///< when set, requests without it get 401
  nlohmann::json models = {{"object", "list"}, {"data", {{{"id", "scripted"}, {"object", "model"}, {"max_model_len", 2048}}}}};
  nlohmann::json props = nullptr;       ///< GET /props answer (llama.cpp); null: 404
  bool reset_route = true;              ///< false: POST /reset_prefix_cache is 404 (llama.cpp, TRT-LLM)
  std::atomic<int> reset_calls{0};

  ScriptServer() { std::signal(SIGPIPE, SIG_IGN); }
  ~ScriptServer() { stop(); }

  int start() {
    svr_.set_tcp_nodelay(true);
    svr_.set_keep_alive_timeout(1);
    svr_.Get("/v1/models", [this](const httplib::Request& req, httplib::Response& res) {
      if (!authorized(req, res)) return;
      res.set_content(models.dump(), "application/json");
    });
    auto gen = [this](const httplib::Request& req, httplib::Response& res) {
      if (!authorized(req, res)) return;
      {
        std::lock_guard lock(mu_);
        bodies_.push_back(req.body);
        t_request_ns_.push_back(now_ns());
      }
      if (status != 200) {
        res.status = status;
        res.set_content(error_body, "application/json");
        return;
      }
      res.set_chunked_content_provider("text/event-stream", [this](std::size_t, httplib::DataSink& sink) {
        std::vector<std::int64_t> writes;
        for (const auto& step : script) {
          if (step.delay.count() > 0) std::this_thread::sleep_for(step.delay);
          writes.push_back(now_ns());
          if (!sink.write(step.bytes.data(), step.bytes.size())) break;
        }
        {
          std::lock_guard lock(mu_);
          write_ns_.push_back(std::move(writes));
        }
        sink.done();
        return true;
      });
    };
    svr_.Post("/v1/completions", gen);
    svr_.Post("/v1/chat/completions", gen);
    svr_.Post("/reset_prefix_cache", [this](const httplib::Request&, httplib::Response& res) {
      ++reset_calls;
      if (!reset_route) {
        res.status = 404;
        res.set_content(R"({"error":{"code":404,"message":"File Not Found","type":"not_found_error"}})", "application/json");
        return;
      }
      res.set_content("{}", "application/json");
    });
    svr_.Get("/props", [this](const httplib::Request&, httplib::Response& res) {
      if (props.is_null()) {
        res.status = 404;
        return;
      }
      res.set_content(props.dump(), "application/json");
    });
    port_ = svr_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { svr_.listen_after_bind(); });
    while (!svr_.is_running()) std::this_thread::sleep_for(std::chrono::microseconds(100));
    return port_;
  }
  void stop() {
    if (thread_.joinable()) {
      svr_.stop();
      thread_.join();
    }
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  /// Write times of the steps of each answered request, in order.
  std::vector<std::vector<std::int64_t>> write_ns() const {
    std::lock_guard lock(mu_);
    return write_ns_;
  }
  std::vector<std::string> bodies() const {
    std::lock_guard lock(mu_);
    return bodies_;
  }

 private:
  bool authorized(const httplib::Request& req, httplib::Response& res) {
    if (required_bearer.empty() || req.get_header_value("Authorization") == "Bearer " + required_bearer) return true;
    res.status = 401;
    res.set_content(R"({"error":{"message":"bad key","type":"auth","param":null,"code":null}})", "application/json");
    return false;
  }

  httplib::Server svr_;
  std::thread thread_;
  int port_ = 0;
  mutable std::mutex mu_;
  std::vector<std::vector<std::int64_t>> write_ns_;
  std::vector<std::string> bodies_;
  std::vector<std::int64_t> t_request_ns_;
};

/// Accepts connections and answers each with `reply` (possibly empty), then keeps it open for
/// `hold` before closing.
class RawServer {
 public:
  RawServer(std::string reply, std::chrono::milliseconds hold) : reply_(std::move(reply)), hold_(hold) {
    std::signal(SIGPIPE, SIG_IGN);
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd_, 16);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      while (!stop_) {
        const int c = ::accept(fd_, nullptr, nullptr);
        if (c < 0) return;
        char buf[4096];
        (void)::recv(c, buf, sizeof buf, 0);
        if (!reply_.empty()) (void)::send(c, reply_.data(), reply_.size(), MSG_NOSIGNAL);
        const auto until = std::chrono::steady_clock::now() + hold_;
        while (!stop_ && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        ::close(c);
      }
    });
  }
  ~RawServer() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }

 private:
  std::string reply_;
  std::chrono::milliseconds hold_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace atlas::test
