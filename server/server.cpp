#include "server/server.hpp"

#include <strings.h>

#include <charconv>
#include <chrono>
#include <iostream>

#include <httplib.h>

#include "server/api_error.hpp"
#include "server/error.hpp"
#include "server/http_connection.hpp"
#include "server/openai_request.hpp"

namespace atlas::server {

using nlohmann::json;

struct Server::Http {
  explicit Http(const ConnectionLimits& limits) : svr(limits) {}
  HttpServer svr;
};

namespace {
/// JSON text for the wire; invalid UTF-8 (a model emitting a lone byte) becomes U+FFFD
/// instead of an exception.
std::string to_wire(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

void reply(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(to_wire(body), "application/json");
}

void reply_error(httplib::Response& res, const ApiError& e) { reply(res, e.status, e.to_json()); }

std::string type_for_status(int status) {
  switch (status) {
    case 404: return "not_found_error";
    case 413: return "invalid_request_error";
    case 429: return "rate_limit_error";
    case 503: return "service_unavailable";
    default: return status >= 500 ? "server_error" : "invalid_request_error";
  }
}

struct StreamState {
  std::optional<DecodeQueue::Ticket> ticket;
  PreparedRequest prepared;
};
}  // namespace

Server::Server(Generator& gen, ServerOptions opts)
    : gen_(gen), opts_(std::move(opts)), queue_(opts_.queue_limit), http_(std::make_unique<Http>(opts_.connections)) {
  if (opts_.queue_limit < 0) throw ServerError("--queue-limit must be >= 0, got " + std::to_string(opts_.queue_limit));
  if (opts_.served_model_name.empty()) throw ServerError("--served-model-name must not be empty");
  if (const ConnectionLimits& l = opts_.connections; l.idle_timeout_ms <= 0 || l.header_timeout_ms <= 0 || l.body_timeout_ms <= 0 ||
                                                      l.write_timeout_ms <= 0 || l.max_connections == 0 || l.max_header_bytes < 1024) {
    throw ServerError("connection limits must be positive (timeouts in ms, max_connections) and max_header_bytes >= 1024; got idle " +
                      std::to_string(l.idle_timeout_ms) + ", header " + std::to_string(l.header_timeout_ms) + ", body " +
                      std::to_string(l.body_timeout_ms) + ", write " + std::to_string(l.write_timeout_ms) + ", max_connections " +
                      std::to_string(l.max_connections) + ", max_header_bytes " + std::to_string(l.max_header_bytes));
  }
  std::string source;
  if (!opts_.chat_template.empty()) {
    source = opts_.chat_template;
    template_origin_ = "option";
  } else if (std::string m = gen_.chat_template(); !m.empty()) {
    try {
      ChatTemplate probe(m);
      source = std::move(m);
      template_origin_ = "model";
    } catch (const ServerError& e) {
      std::cerr << "atlas-serve: warning: the model's chat template is not supported (" << e.what()
                << "); using the fallback template (pass --chat-template FILE to override)\n";
    }
  }
  if (source.empty()) {
    source = fallback_chat_template();
    template_origin_ = "fallback";
  }
  runner_ = std::make_unique<CompletionRunner>(gen_, ChatTemplate(source), opts_.served_model_name);
  install_routes();
}

Server::~Server() {
  if (started_) stop();
}

ServerStats Server::stats() const {
  return {n_ok_.load(), n_rejected_.load(), n_bad_.load(), n_failed_.load(), n_cancelled_.load(), http_->svr.peak_threads()};
}

void Server::install_routes() {
  HttpServer& svr = http_->svr;
  svr.set_tcp_nodelay(true);
  // SO_REUSEADDR only: httplib's default also sets SO_REUSEPORT, which would let a second
  // server bind the same port and silently share its connections.
  svr.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  svr.set_keep_alive_max_count(100000);
  svr.set_payload_max_length(opts_.max_body_bytes);
  // Connections: a thread each, on demand, up to connections.max_connections, and a deadline per
  // request phase (http_connection.hpp). The former fixed pool of 64 threads with httplib's
  // 60 s per-read timeout was starved by 65 slow clients; a client dripping its headers a byte
  // at a time held its thread for hours (issue 16).

  // Judge Content-Length before httplib reads the body: for a length over the limit it reads and
  // discards that many bytes before answering 413, and for one that never arrives it waits
  // read_timeout, so a client claiming 16 GiB (or "-1") held an HTTP thread for a minute
  // without an answer (issue 16). Answer at once and close instead.
  svr.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    ApiError e;
    if (!req.has_header("Content-Length")) {
      // httplib reads a POST (PUT, PATCH, DELETE) body without Content-Length or chunked
      // Transfer-Encoding until EOF: answer 411 at once instead (issue 16).
      const bool has_body = req.method == "POST" || req.method == "PUT" || req.method == "PATCH" || req.method == "DELETE" || req.method == "PRI";
      if (!has_body || strcasecmp(req.get_header_value("Transfer-Encoding").c_str(), "chunked") == 0) return httplib::Server::HandlerResponse::Unhandled;
      e = ApiError{411, "invalid_request_error",
                   "a " + req.method + " request needs a Content-Length header or Transfer-Encoding: chunked (body limit " +
                       std::to_string(opts_.max_body_bytes) + " bytes)",
                   "", "length_required"};
      ++n_bad_;
      reply_error(res, e);
      if (req.get_header_value("Connection") != "close") res.set_header("Connection", "close");
      HttpServer::close_current_after_response();
      return httplib::Server::HandlerResponse::Handled;
    }
    const std::string v = req.get_header_value("Content-Length");
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (v.empty() || ec != std::errc() || end != v.data() + v.size()) {
      e = ApiError{ec == std::errc::result_out_of_range ? 413 : 400, "invalid_request_error",
                   "Content-Length '" + v.substr(0, 40) + "' is not a byte count" + (ec == std::errc::result_out_of_range ? " that fits 64 bits" : ""),
                   "", "invalid_content_length"};
    } else if (n > opts_.max_body_bytes) {
      e = ApiError{413, "invalid_request_error",
                   "request body too large: Content-Length " + v + " exceeds the limit of " + std::to_string(opts_.max_body_bytes) + " bytes", "",
                   "body_too_large"};
    } else {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    ++n_bad_;
    reply_error(res, e);
    // The unread body must not be taken for the next request on this connection.
    if (req.get_header_value("Connection") != "close") res.set_header("Connection", "close");
    HttpServer::close_current_after_response();
    return httplib::Server::HandlerResponse::Handled;
  });

  svr.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (HttpServer::current_body_too_large()) {
      // A chunked body passed max_body_bytes on the wire (DeadlineStream stopped reading it);
      // httplib calls that a 400.
      ++n_bad_;
      reply_error(res, ApiError{413, "invalid_request_error",
                                "request body too large: more than the limit of " + std::to_string(opts_.max_body_bytes) + " bytes", "",
                                "body_too_large"});
      if (req.get_header_value("Connection") != "close") res.set_header("Connection", "close");
      return;
    }
    if (!res.body.empty()) return;
    std::string msg = res.status == 404   ? "no route for " + req.method + " " + req.path
                      : res.status == 413 ? "request body too large"
                                          : "HTTP " + std::to_string(res.status);
    reply(res, res.status, ApiError{res.status, type_for_status(res.status), msg, "", ""}.to_json());
  });
  svr.set_exception_handler([this](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string msg = "internal error";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      msg += std::string(": ") + e.what();
    } catch (...) {
    }
    ++n_failed_;
    reply_error(res, ApiError{500, "server_error", msg, "", "internal_error"});
  });

  svr.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    if (draining_) {
      reply_error(res, ApiError{503, "service_unavailable", "server is shutting down", "", "draining"});
      return;
    }
    reply(res, 200, {{"status", "ok"}});
  });

  const std::int64_t created =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  svr.Get("/v1/models", [this, created](const httplib::Request&, httplib::Response& res) {
    json m = {{"id", opts_.served_model_name},
              {"object", "model"},
              {"created", created},
              {"owned_by", "atlas-bench"},
              {"max_model_len", gen_.context_length()},
              {"atlas", {{"engine", gen_.describe()}, {"chat_template", template_origin_}, {"queue_limit", opts_.queue_limit}}}};
    reply(res, 200, {{"object", "list"}, {"data", json::array({m})}});
  });

  svr.Post("/reset_prefix_cache", [this](const httplib::Request&, httplib::Response& res) {
    auto ticket = queue_.try_enter();
    if (!ticket) {
      ++n_rejected_;
      reply_error(res, ApiError{429, "rate_limit_error", "server busy", "", "queue_full"});
      return;
    }
    ticket->wait_turn();
    gen_.reset();
    reply(res, 200, {{"status", "ok"}});
  });

  auto completion = [this](bool chat) {
    return [this, chat](const httplib::Request& req, httplib::Response& res) {
      if (draining_) {
        ++n_rejected_;
        reply_error(res, ApiError{503, "service_unavailable", "server is shutting down", "", "draining"});
        return;
      }
      if (req.body.size() > opts_.max_body_bytes) {  // chunked: within the framing allowance, over the limit
        ++n_bad_;
        reply_error(res, ApiError{413, "invalid_request_error",
                                  "request body too large: " + std::to_string(req.body.size()) + " bytes exceeds the limit of " +
                                      std::to_string(opts_.max_body_bytes) + " bytes",
                                  "", "body_too_large"});
        return;
      }
      PreparedRequest p;
      try {
        p = runner_->prepare(parse_completion_request(req.body, chat));
      } catch (const ApiError& e) {
        ++n_bad_;
        reply_error(res, e);
        return;
      }
      auto ticket = queue_.try_enter();
      if (!ticket) {
        ++n_rejected_;
        reply_error(res, ApiError{429, "rate_limit_error",
                                  "server busy: one request is decoding and " + std::to_string(opts_.queue_limit) +
                                      " are queued (--queue-limit); retry later",
                                  "", "queue_full"});
        return;
      }
      if (!p.req.stream) {
        ticket->wait_turn();
        try {
          json body = runner_->run(p, [](const json&) { return true; }, HttpServer::current_client_gone);
          if (body.empty()) {  // the client left while it decoded: nothing to answer
            ++n_cancelled_;
            res.status = 499;  // nginx's "client closed request"; the write fails anyway
            return;
          }
          ++n_ok_;
          reply(res, 200, body);
        } catch (const ApiError& e) {
          ++n_failed_;
          reply_error(res, e);
        }
        return;
      }
      auto state = std::make_shared<StreamState>();
      state->ticket.emplace(std::move(*ticket));
      state->prepared = std::move(p);
      res.status = 200;
      res.set_header("Cache-Control", "no-cache");
      res.set_header("X-Accel-Buffering", "no");
      res.set_chunked_content_provider("text/event-stream", [this, state](std::size_t, httplib::DataSink& sink) {
        state->ticket->wait_turn();
        auto write_event = [&sink](const json& j) {
          const std::string ev = "data: " + to_wire(j) + "\n\n";
          return sink.write(ev.data(), ev.size());
        };
        try {
          if (runner_->run(state->prepared, write_event, HttpServer::current_client_gone).empty()) {
            ++n_cancelled_;  // the client left mid-stream; decoding stopped
            state->ticket.reset();
            return false;
          }
          ++n_ok_;
        } catch (const ApiError& e) {
          ++n_failed_;
          write_event(e.to_json());
        }
        state->ticket.reset();  // the next request may decode while this stream closes
        static const std::string done = "data: [DONE]\n\n";
        sink.write(done.data(), done.size());
        sink.done();
        return true;
      });
    };
  };
  svr.Post("/v1/completions", completion(false));
  svr.Post("/v1/chat/completions", completion(true));
}

int Server::start() {
  if (started_) return port_;
  HttpServer& svr = http_->svr;
  if (opts_.port == 0) {
    port_ = svr.bind_to_any_port(opts_.host);
  } else {
    port_ = svr.bind_to_port(opts_.host, opts_.port) ? opts_.port : -1;
  }
  if (port_ <= 0) {
    throw ServerError("cannot listen on " + opts_.host + ":" + std::to_string(opts_.port) +
                      " (address in use, or not a local address)");
  }
  svr.set_backlog(SOMAXCONN);
  started_ = true;
  listener_ = std::thread([this] { http_->svr.listen_after_bind(); });
  // httplib's stop() is a no-op until the accept loop has started: wait for it, so that a
  // stop() right after start() cannot leave the listener running forever.
  for (int i = 0; !svr.is_running(); ++i) {
    if (i == 50000) throw ServerError("the HTTP listener on " + opts_.host + ":" + std::to_string(port_) + " did not start");
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return port_;
}

void Server::stop() {
  std::lock_guard lock(stop_mu_);
  if (stopped_ || !started_) return;
  draining_ = true;
  if (!queue_.wait_idle(opts_.drain_timeout_ms)) {
    std::cerr << "atlas-serve: drain timeout (" << opts_.drain_timeout_ms << " ms) with " << queue_.admitted()
              << " requests still in flight; closing\n";
  }
  http_->svr.close_connections();  // idle keep-alive and slow clients: their waits end now
  http_->svr.stop();
  if (listener_.joinable()) listener_.join();
  stopped_ = true;
  stopped_cv_.notify_all();
}

void Server::wait() {
  std::unique_lock lock(stop_mu_);
  stopped_cv_.wait(lock, [&] { return stopped_ || !started_; });
}

}  // namespace atlas::server
