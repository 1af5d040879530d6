#include "server/api_keys.hpp"

#include <strings.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "server/error.hpp"

namespace atlas::server {

namespace {
void add_key(std::vector<std::string>& out, std::string key, const std::string& where) {
  if (key.empty()) throw ServerError(where + ": the API key is empty");
  for (unsigned char c : key) {
    if (c <= 0x20 || c == 0x7f) throw ServerError(where + ": the API key contains whitespace or a control character");
  }
  if (std::find(out.begin(), out.end(), key) == out.end()) out.push_back(std::move(key));
}

std::string trim(std::string s) {
  const auto ws = [](unsigned char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && ws(static_cast<unsigned char>(s.back()))) s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && ws(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}
}  // namespace

std::vector<std::string> load_api_keys(const ApiKeySources& sources) {
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < sources.keys.size(); ++i) add_key(keys, sources.keys[i], "--api-key #" + std::to_string(i + 1));
  for (const std::string& var : sources.env_vars) {
    const char* v = std::getenv(var.c_str());
    if (v == nullptr || *v == '\0') throw ServerError("--api-key-env: environment variable '" + var + "' is not set or empty");
    add_key(keys, trim(v), "--api-key-env " + var);
  }
  for (const auto& file : sources.files) {
    std::ifstream in(file);
    if (!in) throw ServerError("--api-key-file " + file.string() + ": cannot be read");
    std::string line;
    int n = 0, line_no = 0;
    while (std::getline(in, line)) {
      ++line_no;
      line = trim(line);
      if (line.empty() || line[0] == '#') continue;
      add_key(keys, line, "--api-key-file " + file.string() + " line " + std::to_string(line_no));
      ++n;
    }
    if (in.bad()) throw ServerError("--api-key-file " + file.string() + ": read error");
    if (n == 0) throw ServerError("--api-key-file " + file.string() + ": no key in the file (one key per line)");
  }
  return keys;
}

bool api_key_matches(std::string_view given, const std::vector<std::string>& keys) {
  unsigned match = 0;
  for (const std::string& key : keys) {
    // Differences are OR-ed over every byte of `given`; bytes past the key's end compare with
    // its first byte and the length difference is OR-ed in, so a wrong length never matches.
    std::size_t diff = given.size() ^ key.size();
    for (std::size_t i = 0; i < given.size(); ++i) {
      const unsigned char k = key.empty() ? 0 : static_cast<unsigned char>(key[i < key.size() ? i : 0]);
      diff |= static_cast<unsigned char>(given[i]) ^ k;
    }
    match |= static_cast<unsigned>(diff == 0);
  }
  return match != 0;
}

std::optional<ApiError> check_api_key(std::string_view authorization, const std::vector<std::string>& keys) {
  if (keys.empty()) return std::nullopt;
  constexpr std::string_view scheme = "bearer";
  std::string_view token;
  bool has_bearer = authorization.size() > scheme.size() && strncasecmp(authorization.data(), scheme.data(), scheme.size()) == 0 &&
                    (authorization[scheme.size()] == ' ' || authorization[scheme.size()] == '\t');
  if (has_bearer) {
    token = authorization.substr(scheme.size());
    while (!token.empty() && (token.front() == ' ' || token.front() == '\t')) token.remove_prefix(1);
    while (!token.empty() && (token.back() == ' ' || token.back() == '\t')) token.remove_suffix(1);
  }
  if (!token.empty() && api_key_matches(token, keys)) return std::nullopt;
  // OpenAI's own wording and code; the key given is never echoed (it may be a real key sent
  // to the wrong server).
  std::string msg = authorization.empty() ? "You didn't provide an API key. Send it as 'Authorization: Bearer <key>'."
                    : !has_bearer         ? "The Authorization header must be 'Bearer <key>'."
                                          : "Incorrect API key provided.";
  return ApiError{401, "invalid_request_error", std::move(msg), "", "invalid_api_key"};
}

}  // namespace atlas::server
