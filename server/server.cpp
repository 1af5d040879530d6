#include "server/server.hpp"

#include <chrono>
#include <iostream>

#include <httplib.h>

#include "server/api_error.hpp"
#include "server/api_keys.hpp"
#include "server/http_framing.hpp"
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

ApiError drain_timeout_error() {
  return ApiError{503, "service_unavailable", "server is shutting down: the request did not finish within the drain timeout", "",
                  "drain_timeout"};
}

struct StreamState {
  std::optional<DecodeQueue::Ticket> ticket;
  PreparedRequest prepared;
};
}  // namespace

Server::Server(Generator& gen, ServerOptions opts)
    : gen_(gen),
      opts_(std::move(opts)),
      guard_(opts_.host, opts_.allowed_hosts, opts_.allowed_origins),
      queue_(opts_.queue_limit),
      http_(std::make_unique<Http>(opts_.connections)) {
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
      chat::ChatTemplate probe(m);
      source = std::move(m);
      template_origin_ = "model";
    } catch (const chat::TemplateError& e) {
      std::cerr << "atlas-serve: warning: the model's chat template is not supported (" << e.what()
                << "); using the fallback template (pass --chat-template FILE to override)\n";
    }
  }
  if (source.empty()) {
    source = chat::fallback_chat_template();
    template_origin_ = "fallback";
  }
  runner_ = std::make_unique<CompletionRunner>(gen_, chat::ChatTemplate(source), opts_.served_model_name);
  install_routes();
}

Server::~Server() {
  if (started_) stop();
}

ServerStats Server::stats() const {
  return {n_ok_.load(), n_rejected_.load(), n_bad_.load(), n_failed_.load(), n_cancelled_.load(), n_aborted_.load(), http_->svr.peak_threads()};
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
  // at a time held its thread for hours.

  // Every request passes these checks after httplib parsed its headers and before it reads any
  // body byte, in this order: framing (RFC 9112, http_framing.hpp), Host and Origin
  // (csrf_guard.hpp), the API key (api_keys.hpp; /health is open, as vLLM's), then the body's
  // length and type. A refused request is answered and its connection closed with a lingering
  // close: its body was not read, and must not be taken for the next request. Content-Length is
  // judged here because httplib, for a length over the limit, reads and discards that many bytes
  // before answering 413, and for one that never arrives waits read_timeout.
  svr.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    auto refuse = [&](const ApiError& e) {
      ++n_bad_;
      reply_error(res, e);
      if (e.status == 401) res.set_header("WWW-Authenticate", "Bearer");  // RFC 6750 section 3
      if (req.get_header_value("Connection") != "close") res.set_header("Connection", "close");
      HttpServer::close_current_after_response();
      return httplib::Server::HandlerResponse::Handled;
    };
    const FramingCheck fc = check_framing(req);
    if (fc.error) return refuse(*fc.error);
    if (auto e = guard_.check_host(req.get_header_value("Host"))) return refuse(*e);
    std::optional<std::string> origin;
    if (req.has_header("Origin")) origin = req.get_header_value("Origin");
    if (auto e = guard_.check_origin(origin)) return refuse(*e);
    const bool has_body = fc.framing.chunked || fc.framing.content_length.value_or(0) > 0;
    const bool body_method = req.method == "POST" || req.method == "PUT" || req.method == "PATCH" || req.method == "DELETE" || req.method == "PRI";
    if (has_body && !body_method) {
      // httplib reads a body for those five methods only: a GET's body would be parsed as the
      // next request on the connection.
      return refuse(bad_request("a " + req.method + " request must not have a body", "", "unexpected_body"));
    }
    if (req.method == "OPTIONS" && origin) {
      // A CORS preflight from an allowed origin (a refused one got 403 above); it carries no
      // credentials (Fetch standard), so it needs no key. Without CORS, OPTIONS is httplib's 404.
      res.status = 204;
      res.set_header("Allow", "GET, POST, OPTIONS");
      res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
      res.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type");
      res.set_header("Access-Control-Max-Age", "600");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (req.path != "/health") {
      if (auto e = check_api_key(req.get_header_value("Authorization"), opts_.api_keys)) return refuse(*e);
    }
    if (body_method && !fc.framing.chunked && !fc.framing.content_length) {
      // httplib reads a POST (PUT, PATCH, DELETE) body without Content-Length or chunked
      // Transfer-Encoding until EOF: answer 411 at once instead.
      return refuse(ApiError{411, "invalid_request_error",
                             "a " + req.method + " request needs a Content-Length header or Transfer-Encoding: chunked (body limit " +
                                 std::to_string(opts_.max_body_bytes) + " bytes)",
                             "", "length_required"});
    }
    if (fc.framing.content_length && *fc.framing.content_length > opts_.max_body_bytes) {
      return refuse(ApiError{413, "invalid_request_error",
                             "request body too large: Content-Length " + std::to_string(*fc.framing.content_length) +
                                 " exceeds the limit of " + std::to_string(opts_.max_body_bytes) + " bytes",
                             "", "body_too_large"});
    }
    if (has_body) {
      if (auto e = CsrfGuard::check_content_type(req.get_header_value("Content-Type"))) return refuse(*e);
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // CORS (csrf_guard.hpp): answers to an allowed origin say so; without --allowed-origin no
  // Origin gets this far.
  svr.set_post_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (!guard_.cors_enabled() || !req.has_header("Origin")) return;
    const std::string origin = req.get_header_value("Origin");
    if (!guard_.cors_allows(origin)) return;
    res.set_header("Access-Control-Allow-Origin", origin);
    res.set_header("Vary", "Origin");
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
      // Decoding stops for a client that left, and for every request once stop() has waited
      // drain_timeout_ms (aborting_).
      auto stop_decoding = [this] { return aborting_.load() || HttpServer::current_client_gone(); };
      if (!p.req.stream) {
        if (!ticket->wait_turn(HttpServer::current_client_gone)) {  // the client left while queued
          ++n_cancelled_;
          res.status = 499;
          return;
        }
        try {
          json body = aborting_ ? json::object() : runner_->run(p, [](const json&) { return true; }, stop_decoding);
          if (body.empty() && aborting_) {
            ++n_aborted_;
            reply_error(res, drain_timeout_error());
            return;
          }
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
      res.set_chunked_content_provider("text/event-stream", [this, state, stop_decoding](std::size_t, httplib::DataSink& sink) {
        if (!state->ticket->wait_turn(HttpServer::current_client_gone)) {  // the client left while queued
          ++n_cancelled_;
          state->ticket.reset();
          return false;
        }
        auto write_event = [&sink](const json& j) {
          const std::string ev = "data: " + to_wire(j) + "\n\n";
          return sink.write(ev.data(), ev.size());
        };
        try {
          if (aborting_ || runner_->run(state->prepared, write_event, stop_decoding).empty()) {
            if (aborting_) {  // stopped by the drain timeout: say so, without [DONE]
              ++n_aborted_;
              state->ticket.reset();
              write_event(drain_timeout_error().to_json());
              sink.done();
              return true;
            }
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
    // The cap is enforced: decoding stops within a token (and the prefill in progress), each
    // stopped request is told why (500 / an error event), and after abort_grace_ms no write
    // waits for a client that does not read. Before, the in-flight streams ran to max_tokens
    // and the exit came 76 s after SIGTERM.
    std::cerr << "atlas-serve: drain timeout (" << opts_.drain_timeout_ms << " ms) with " << queue_.admitted()
              << " requests still in flight; stopping them\n";
    aborting_ = true;
    if (!queue_.wait_idle(opts_.abort_grace_ms)) {
      http_->svr.abort_writes();
      queue_.wait_idle(opts_.abort_grace_ms);
    }
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
