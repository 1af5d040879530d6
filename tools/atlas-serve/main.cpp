// atlas-serve: an OpenAI-compatible HTTP server over one atlas engine (server/server.hpp).
//   atlas-serve --model PATH [--host 127.0.0.1] [--port N] [--served-model-name NAME]
//               [--queue-limit N] [--backend cpu|cuda] [--chat-template FILE]
//               [--request-timeout S] [--keep-alive-timeout S] [--write-timeout S] [--max-connections N]
//               [--api-key KEY | --api-key-env VAR | --api-key-file FILE]... [--allowed-host NAME]...
//               [--allowed-origin ORIGIN]...
// Prints "atlas-serve: listening on http://HOST:PORT/v1 ..." once it accepts connections
// (--port 0 picks a free port). SIGINT/SIGTERM drain in-flight requests, then exit 0.
// Exit 3 on a usage or input error (an unknown option or bad value, a bad model file, port in
// use), 4 on a failure of the machine or the program (common/exit_code.hpp; README, "Exit codes").
#include <csignal>
#include <filesystem>
#include <iostream>
#include <pthread.h>
#include <sys/resource.h>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/exit_code.hpp"
#include "server/api_keys.hpp"
#include "server/generator.hpp"
#include "server/server.hpp"
#include "tools/cli_parse.hpp"

int main(int argc, char** argv) {
  CLI::App app{"atlas-serve: OpenAI-compatible server (/v1/completions, /v1/chat/completions, /v1/models)"};
  atlas::server::GeneratorOptions gen_opts;
  atlas::server::ServerOptions srv_opts;
  std::string template_file;
  app.add_option("--model", gen_opts.model, "Model file or directory (GGUF, llama2.c .bin, safetensors dir)")->required();
  app.add_option("--tokenizer", gen_opts.tokenizer, "llama2.c tokenizer (tok*.bin), or a tokenizer.json for a safetensors model directory; default: beside the model");
  app.add_option("--host", srv_opts.host, "Address to listen on")->capture_default_str();
  app.add_option("--port", srv_opts.port, "Port; 0 = pick a free one")->capture_default_str()->check(CLI::Range(0, 65535));
  app.add_option("--served-model-name", srv_opts.served_model_name, "Model id to list and accept (default: the model file stem)");
  app.add_option("--queue-limit", srv_opts.queue_limit, "Requests that may wait behind the decoding one; more get 429")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--backend", gen_opts.backend, "Engine backend")->capture_default_str()->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option("--max-seq-len", gen_opts.max_seq_len, "KV cache capacity in tokens; 0 = the model's")->capture_default_str();
  app.add_option("--threads", gen_opts.threads, "CPU backend threads; 0 = all")->capture_default_str();
  app.add_option("--chat-template", template_file, "Jinja chat template file (overrides the model's)");
  // Slow and hostile clients (server/connection_limits.hpp, docs/serving.md): deadlines per
  // request phase, in seconds, and the connection cap.
  auto& lim = srv_opts.connections;
  double request_timeout_s = lim.header_timeout_ms / 1000.0, keep_alive_s = lim.idle_timeout_ms / 1000.0,
         write_timeout_s = lim.write_timeout_ms / 1000.0;
  app.add_option("--request-timeout", request_timeout_s,
                 "Seconds a client has to send a request's headers, and again its body (plus 1 s per 64 KiB received); then the connection closes")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 86400.0));
  app.add_option("--keep-alive-timeout", keep_alive_s, "Seconds an open connection may wait idle for its next request")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 86400.0));
  app.add_option("--write-timeout", write_timeout_s, "Seconds a response write may make no progress (a client not reading) before the connection closes")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 86400.0));
  double drain_timeout_s = srv_opts.drain_timeout_ms / 1000.0;
  app.add_option("--drain-timeout", drain_timeout_s,
                 "Seconds SIGINT/SIGTERM wait for requests in flight and queued; then they are stopped (503 / an error event) and the server exits")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 86400.0));
  app.add_option("--inject-decode-delay-us", gen_opts.inject_decode_delay_us,
                 "Test hook: sleep this many microseconds per decoded token (a slow model for drain and cancellation tests)")
      ->check(CLI::Range(0.0, 1e7));
  app.add_option("--inject-prefill-delay-us", gen_opts.inject_prefill_delay_us,
                 "Test hook: sleep this many microseconds per prompt token at each CPU prefill chunk boundary (a long prefill for cancellation tests)")
      ->check(CLI::Range(0.0, 1e7));
  app.add_option("--max-connections", lim.max_connections,
                 "Connections served at once (a thread each); more wait for one to close")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 16));
  // Authentication and browser defences (docs/serving.md, "Authentication and origins").
  atlas::server::ApiKeySources key_sources;
  app.add_option("--api-key", key_sources.keys,
                 "Accept this bearer token (repeatable); every route but /health then needs one. Visible in ps: prefer --api-key-env or --api-key-file");
  app.add_option("--api-key-env", key_sources.env_vars, "Accept the bearer token held in this environment variable (repeatable)");
  app.add_option("--api-key-file", key_sources.files, "Accept the bearer tokens in this file, one per line ('#' lines skipped; repeatable)");
  app.add_option("--allowed-host", srv_opts.allowed_hosts,
                 "Accept requests whose Host header names this host (repeatable; '*' = any). Always accepted: IP literals, localhost, --host");
  app.add_option("--allowed-origin", srv_opts.allowed_origins,
                 "Serve cross-origin (browser) requests from this origin, e.g. http://localhost:3000, with CORS headers (repeatable; '*' = any). Default: none");
  srv_opts.served_model_name.clear();
  if (const auto code = atlas::cli::parse_or_exit_code(app, argc, argv)) return *code;  // 3 on a usage error
  srv_opts.drain_timeout_ms = static_cast<int>(drain_timeout_s * 1000.0 + 0.5);
  lim.header_timeout_ms = lim.body_timeout_ms = static_cast<int>(request_timeout_s * 1000.0 + 0.5);
  lim.idle_timeout_ms = static_cast<int>(keep_alive_s * 1000.0 + 0.5);
  lim.write_timeout_ms = static_cast<int>(write_timeout_s * 1000.0 + 0.5);
  // Each connection is a descriptor: let the soft limit reach the hard one (often 1,024 of
  // 524,288), as servers do, so that --max-connections is not cut short by EMFILE.
  if (rlimit nofile{}; ::getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
    nofile.rlim_cur = nofile.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &nofile);
  }

  // Signals are taken by sigwait() below, never by a handler: block them before any thread
  // starts so that every server thread inherits the mask.
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  std::signal(SIGPIPE, SIG_IGN);  // a client that hangs up must not kill the server

  try {
    if (srv_opts.served_model_name.empty()) srv_opts.served_model_name = gen_opts.model.stem().string();
    srv_opts.api_keys = atlas::server::load_api_keys(key_sources);
    if (!template_file.empty()) srv_opts.chat_template = atlas::read_file(template_file);
    auto gen = atlas::server::open_session_generator(gen_opts);
    atlas::server::Server server(*gen, srv_opts);
    const int port = server.start();
    std::cout << "atlas-serve: listening on http://" << srv_opts.host << ":" << port << "/v1 (model '"
              << srv_opts.served_model_name << "', context " << gen->context_length() << ", chat template "
              << server.chat_template_origin() << ", queue limit " << srv_opts.queue_limit << ", "
              << (srv_opts.api_keys.empty() ? std::string("no API key") : std::to_string(srv_opts.api_keys.size()) + " API key(s)") << ")"
              << std::endl;
    int sig = 0;
    sigwait(&sigs, &sig);
    std::cout << "atlas-serve: " << (sig == SIGINT ? "SIGINT" : "SIGTERM") << ": draining in-flight requests" << std::endl;
    server.stop();
    const auto st = server.stats();
    std::cout << "atlas-serve: stopped (" << st.requests << " completed, " << st.rejected << " rejected, " << st.bad
              << " bad requests, " << st.failed << " failed)" << std::endl;
    std::cout << "atlas-serve: " << st.cancelled << " completions stopped because their client left, " << st.aborted
              << " stopped by the drain timeout; at most "
              << st.peak_connection_threads << " connections served at once" << std::endl;
    return 0;
  } catch (...) {
    return atlas::exit_code_of_current_exception("atlas-serve");
  }
}
