// atlas-serve as a network service, in process over the loopback: API keys, Host and Origin
// checks, the body's media type, and RFC 9112 framing judged on raw sockets (what an HTTP
// library would refuse to send).
#if ATLAS_HAVE_HTTPLIB
#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>

#include <doctest/doctest.h>
#include <httplib.h>

#include "server/api_keys.hpp"
#include "server/error.hpp"
#include "server/server.hpp"
#include "tests/loopback_socket.hpp"
#include "tests/server/served_fake.hpp"
#include "tests/test_data.hpp"

using nlohmann::json;

namespace {

using Served = atlas::test::ServedFake;

/// Sends `request` on a fresh connection and reads until the server closes it (or 5 s pass).
struct RawExchange {
  std::string bytes;   ///< everything the server sent
  bool closed = false; ///< the server closed the connection
};
RawExchange raw_exchange(int port, const std::string& request, int wait_ms = 5000) {
  atlas::test::LoopbackSocket s(port);
  REQUIRE(s.send(request));
  RawExchange r;
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  while (std::chrono::steady_clock::now() < end) {
    pollfd p{s.fd(), POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::recv(s.fd(), buf, sizeof buf, 0);
    if (n <= 0) {
      r.closed = true;
      break;
    }
    r.bytes.append(buf, static_cast<std::size_t>(n));
  }
  return r;
}

int count(const std::string& hay, const std::string& needle) {
  int n = 0;
  for (auto at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
  return n;
}

/// The JSON body of the first response in `bytes` (Content-Length framed).
json first_body(const std::string& bytes) {
  const auto head_end = bytes.find("\r\n\r\n");
  REQUIRE(head_end != std::string::npos);
  const auto cl = bytes.find("Content-Length: ");
  REQUIRE(cl != std::string::npos);
  const std::size_t len = std::stoul(bytes.substr(cl + 16));
  return json::parse(bytes.substr(head_end + 4, len));
}

const std::string kBody = R"({"model":"fake","prompt":"Once","max_tokens":3})";

std::string post(const std::string& host, const std::string& extra_headers, const std::string& body = kBody,
                 const std::string& path = "/v1/completions") {
  return "POST " + path + " HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n" + extra_headers + "\r\n" + body;
}

}  // namespace

TEST_CASE("api keys: constant-time match, Bearer parsing, OpenAI-shaped 401") {
  using atlas::server::api_key_matches;
  using atlas::server::check_api_key;
  const std::vector<std::string> keys = {"sk-one", "sk-two-longer"};
  CHECK(api_key_matches("sk-one", keys));
  CHECK(api_key_matches("sk-two-longer", keys));
  CHECK_FALSE(api_key_matches("sk-on", keys));      // a prefix
  CHECK_FALSE(api_key_matches("sk-one1", keys));    // one byte more
  CHECK_FALSE(api_key_matches("", keys));
  CHECK_FALSE(api_key_matches("sk-onE", keys));
  CHECK_FALSE(check_api_key("Bearer sk-one", keys).has_value());
  CHECK_FALSE(check_api_key("bearer   sk-two-longer ", keys).has_value());
  CHECK_FALSE(check_api_key("", {}).has_value());  // no keys: authentication off
  const auto none = check_api_key("", keys);
  REQUIRE(none.has_value());
  CHECK(none->status == 401);
  CHECK(none->code == "invalid_api_key");
  CHECK(none->message.find("didn't provide an API key") != std::string::npos);
  const auto basic = check_api_key("Basic c2stb25lOg==", keys);
  REQUIRE(basic.has_value());
  CHECK(basic->message.find("Bearer") != std::string::npos);
  const auto wrong = check_api_key("Bearer sk-three", keys);
  REQUIRE(wrong.has_value());
  CHECK(wrong->message == "Incorrect API key provided.");  // the key given is never echoed
}

TEST_CASE("api keys: from the command line, environment variables and files; bad sources are named") {
  using atlas::server::ApiKeySources;
  using atlas::server::load_api_keys;
  const auto dir = atlas::test::scratch_dir("api_keys");
  {
    std::ofstream(dir / "keys.txt") << "# comment\n\nsk-file-1\r\n  sk-file-2  \nsk-cli\n";
    std::ofstream(dir / "empty.txt") << "# only a comment\n\n";
  }
  ::setenv("ATLAS_TEST_SERVE_KEY", "sk-env\n", 1);
  ApiKeySources s;
  s.keys = {"sk-cli"};
  s.env_vars = {"ATLAS_TEST_SERVE_KEY"};
  s.files = {dir / "keys.txt"};
  CHECK(load_api_keys(s) == std::vector<std::string>{"sk-cli", "sk-env", "sk-file-1", "sk-file-2"});
  ApiKeySources unset;
  unset.env_vars = {"ATLAS_TEST_SURELY_UNSET_KEY"};
  CHECK_THROWS_WITH_AS(load_api_keys(unset), "--api-key-env: environment variable 'ATLAS_TEST_SURELY_UNSET_KEY' is not set or empty",
                       atlas::server::ServerError);
  ApiKeySources empty_file;
  empty_file.files = {dir / "empty.txt"};
  CHECK_THROWS_AS(load_api_keys(empty_file), atlas::server::ServerError);
  ApiKeySources missing;
  missing.files = {dir / "missing.txt"};
  CHECK_THROWS_WITH_AS(load_api_keys(missing), ("--api-key-file " + (dir / "missing.txt").string() + ": cannot be read").c_str(),
                       atlas::server::ServerError);
  ApiKeySources spaced;
  spaced.keys = {"sk a"};
  CHECK_THROWS_AS(load_api_keys(spaced), atlas::server::ServerError);
}

TEST_CASE("network: every route but /health needs an API key when keys are set") {
  Served f;
  f.opts.api_keys = {"sk-alpha", "sk-beta"};
  f.start();
  httplib::Client c("127.0.0.1", f.port);
  c.set_read_timeout(5, 0);
  auto h = c.Get("/health");
  REQUIRE(h);
  CHECK(h->status == 200);
  for (const char* path : {"/v1/models", "/v1/nothing"}) {
    auto r = c.Get(path);
    REQUIRE(r);
    CHECK(r->status == 401);
    CHECK(r->get_header_value("WWW-Authenticate") == "Bearer");
    const json e = json::parse(r->body)["error"];
    CHECK(e["type"] == "invalid_request_error");
    CHECK(e["code"] == "invalid_api_key");
    CHECK(e["param"].is_null());
  }
  auto reset = c.Post("/reset_prefix_cache", "", "application/json");
  REQUIRE(reset);
  CHECK(reset->status == 401);
  auto no_key = c.Post("/v1/completions", kBody, "application/json");
  REQUIRE(no_key);
  CHECK(no_key->status == 401);
  CHECK(f.gen.generate_calls == 0);
  auto wrong = c.Post("/v1/completions", {{"Authorization", "Bearer sk-gamma"}}, kBody, "application/json");
  REQUIRE(wrong);
  CHECK(wrong->status == 401);
  for (const char* key : {"sk-alpha", "sk-beta"}) {
    auto ok = c.Post("/v1/completions", {{"Authorization", std::string("Bearer ") + key}}, kBody, "application/json");
    REQUIRE(ok);
    CHECK(ok->status == 200);
  }
  CHECK(f.gen.generate_calls == 2);
  auto models = c.Get("/v1/models", {{"Authorization", "Bearer sk-beta"}});
  REQUIRE(models);
  CHECK(models->status == 200);
}

TEST_CASE("network: a foreign Host (DNS rebinding) and a foreign Origin (CSRF) are refused; text/plain is 415") {
  Served f;
  f.start();
  // The tester's attack: a text/plain POST with a foreign Host and Origin.
  const std::string plain = "POST /reset_prefix_cache HTTP/1.1\r\nHost: attacker.example:" + std::to_string(f.port) +
                            "\r\nOrigin: http://attacker.example\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi";
  RawExchange r = raw_exchange(f.port, plain);
  CHECK(r.bytes.rfind("HTTP/1.1 403", 0) == 0);
  CHECK(first_body(r.bytes)["error"]["code"] == "host_not_allowed");
  CHECK(r.closed);
  // Our own Host, a foreign Origin.
  r = raw_exchange(f.port, post(f.host(), "Origin: http://attacker.example\r\n"));
  CHECK(r.bytes.rfind("HTTP/1.1 403", 0) == 0);
  CHECK(first_body(r.bytes)["error"]["code"] == "origin_not_allowed");
  CHECK(r.bytes.find("Access-Control-Allow-Origin") == std::string::npos);
  // text/plain from a same-host client: 415.
  const std::string tp = "POST /v1/completions HTTP/1.1\r\nHost: " + f.host() + "\r\nContent-Type: text/plain\r\nContent-Length: " +
                         std::to_string(kBody.size()) + "\r\n\r\n" + kBody;
  r = raw_exchange(f.port, tp);
  CHECK(r.bytes.rfind("HTTP/1.1 415", 0) == 0);
  CHECK(first_body(r.bytes)["error"]["code"] == "unsupported_media_type");
  CHECK(f.gen.generate_calls == 0);
  // Accepted Hosts: localhost, IP literals, the bound address; application/json with a charset.
  for (const std::string& host : {"localhost:" + std::to_string(f.port), f.host(), std::string("127.0.0.1"), std::string("[::1]:8000")}) {
    INFO(host);
    r = raw_exchange(f.port, post(host, "Connection: close\r\n"));
    CHECK(r.bytes.rfind("HTTP/1.1 200", 0) == 0);
  }
  const std::string charset = "POST /v1/completions HTTP/1.1\r\nHost: " + f.host() +
                              "\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\nContent-Length: " +
                              std::to_string(kBody.size()) + "\r\n\r\n" + kBody;
  r = raw_exchange(f.port, charset);
  CHECK(r.bytes.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(f.gen.generate_calls == 5);
}

TEST_CASE("network: --allowed-host and --allowed-origin (CORS) let named browsers in") {
  Served f;
  f.opts.allowed_hosts = {"gpu-box.lan"};
  f.opts.allowed_origins = {"http://localhost:3000"};
  f.start();
  RawExchange r = raw_exchange(f.port, post("gpu-box.lan:" + std::to_string(f.port), "Origin: http://localhost:3000\r\nConnection: close\r\n"));
  CHECK(r.bytes.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(r.bytes.find("Access-Control-Allow-Origin: http://localhost:3000\r\n") != std::string::npos);
  r = raw_exchange(f.port, post(f.host(), "Origin: http://localhost:3001\r\n"));
  CHECK(r.bytes.rfind("HTTP/1.1 403", 0) == 0);
  r = raw_exchange(f.port, "OPTIONS /v1/completions HTTP/1.1\r\nHost: " + f.host() +
                           "\r\nOrigin: http://localhost:3000\r\nAccess-Control-Request-Method: POST\r\n"
                           "Access-Control-Request-Headers: authorization, content-type\r\nConnection: close\r\n\r\n");
  CHECK(r.bytes.rfind("HTTP/1.1 204", 0) == 0);
  CHECK(r.bytes.find("Access-Control-Allow-Origin: http://localhost:3000\r\n") != std::string::npos);
  CHECK(r.bytes.find("Access-Control-Allow-Headers: Authorization, Content-Type\r\n") != std::string::npos);
  r = raw_exchange(f.port, post("other.lan", ""));
  CHECK(r.bytes.rfind("HTTP/1.1 403", 0) == 0);
}

TEST_CASE("network: RFC 9112 framing on raw sockets: ambiguous lengths are refused and the connection closed") {
  Served f;
  f.start();
  const std::string smuggled = "GET /v1/models HTTP/1.1\r\nHost: " + f.host() + "\r\n\r\n";
  SUBCASE("Content-Length with Transfer-Encoding: 400, closed, the smuggled request never answered") {
    const std::string body = "0\r\n\r\n" + smuggled;
    const std::string req = "POST /v1/completions HTTP/1.1\r\nHost: " + f.host() +
                            "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
                            "\r\nTransfer-Encoding: chunked\r\n\r\n" + body;
    const RawExchange r = raw_exchange(f.port, req);
    CHECK(r.bytes.rfind("HTTP/1.1 400", 0) == 0);
    CHECK(first_body(r.bytes)["error"]["code"] == "ambiguous_length");
    CHECK(r.bytes.find("Connection: close") != std::string::npos);
    CHECK(count(r.bytes, "HTTP/1.1 ") == 1);
    CHECK(r.closed);
  }
  SUBCASE("two different Content-Lengths: 400") {
    const RawExchange r = raw_exchange(f.port, "POST /v1/completions HTTP/1.1\r\nHost: " + f.host() +
                                               "\r\nContent-Type: application/json\r\nContent-Length: 3\r\nContent-Length: " +
                                               std::to_string(kBody.size()) + "\r\n\r\n" + kBody);
    CHECK(r.bytes.rfind("HTTP/1.1 400", 0) == 0);
    CHECK(first_body(r.bytes)["error"]["code"] == "invalid_content_length");
    CHECK(count(r.bytes, "HTTP/1.1 ") == 1);
    CHECK(r.closed);
  }
  SUBCASE("a Content-Length list with differing values: 400; identical repeats are one length") {
    RawExchange r = raw_exchange(f.port, "POST /v1/completions HTTP/1.1\r\nHost: " + f.host() +
                                         "\r\nContent-Type: application/json\r\nContent-Length: 3, " + std::to_string(kBody.size()) +
                                         "\r\n\r\n" + kBody);
    CHECK(r.bytes.rfind("HTTP/1.1 400", 0) == 0);
    const std::string n = std::to_string(kBody.size());
    r = raw_exchange(f.port, "POST /v1/completions HTTP/1.1\r\nHost: " + f.host() + "\r\nContent-Type: application/json\r\nContent-Length: " + n +
                             "\r\nContent-Length: " + n + "\r\nConnection: close\r\n\r\n" + kBody);
    CHECK(r.bytes.rfind("HTTP/1.1 200", 0) == 0);
  }
  SUBCASE("HTTP/1.1 without Host: 400; two Host lines: 400; HTTP/1.0 without Host: served") {
    RawExchange r = raw_exchange(f.port, "GET /health HTTP/1.1\r\n\r\n");
    CHECK(r.bytes.rfind("HTTP/1.1 400", 0) == 0);
    CHECK(first_body(r.bytes)["error"]["code"] == "missing_host");
    CHECK(r.closed);
    r = raw_exchange(f.port, "GET /health HTTP/1.1\r\nHost: " + f.host() + "\r\nHost: " + f.host() + "\r\n\r\n");
    CHECK(r.bytes.rfind("HTTP/1.1 400", 0) == 0);
    r = raw_exchange(f.port, "GET /health HTTP/1.0\r\n\r\n");
    CHECK(r.bytes.rfind("HTTP/1.1 200", 0) == 0);
  }
  SUBCASE("Transfer-Encoding other than chunked: 501; in HTTP/1.0: 400") {
    RawExchange r = raw_exchange(f.port, "POST /v1/completions HTTP/1.1\r\nHost: " + f.host() +
                                         "\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n");
    CHECK(r.bytes.rfind("HTTP/1.1 501", 0) == 0);
    CHECK(first_body(r.bytes)["error"]["code"] == "unsupported_transfer_encoding");
    CHECK(r.closed);
    r = raw_exchange(f.port, "POST /v1/completions HTTP/1.1\r\nHost: " + f.host() +
                             "\r\nContent-Type: application/json\r\nTransfer-Encoding: identity\r\n\r\n");
    CHECK(r.bytes.rfind("HTTP/1.1 501", 0) == 0);
    r = raw_exchange(f.port, "POST /v1/completions HTTP/1.0\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
    CHECK(r.bytes.rfind("HTTP/1.1 400", 0) == 0);
  }
  SUBCASE("a GET with a body: 400 and closed (httplib would parse the body as the next request)") {
    const RawExchange r = raw_exchange(f.port, "GET /health HTTP/1.1\r\nHost: " + f.host() + "\r\nContent-Length: " +
                                               std::to_string(smuggled.size()) + "\r\n\r\n" + smuggled);
    CHECK(r.bytes.rfind("HTTP/1.1 400", 0) == 0);
    CHECK(count(r.bytes, "HTTP/1.1 ") == 1);
    CHECK(r.closed);
  }
  SUBCASE("chunked alone is still served, and keep-alive still works after it") {
    char size_hex[16];
    std::snprintf(size_hex, sizeof size_hex, "%zx", kBody.size());
    const RawExchange r = raw_exchange(f.port, "POST /v1/completions HTTP/1.1\r\nHost: " + f.host() +
                                               "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" + size_hex + "\r\n" +
                                               kBody + "\r\n0\r\n\r\n" + smuggled.substr(0, smuggled.size() - 2) + "Connection: close\r\n\r\n");
    CHECK(r.bytes.rfind("HTTP/1.1 200", 0) == 0);
    CHECK(count(r.bytes, "HTTP/1.1 200") == 2);
  }
}

#endif
