#pragma once
// Bearer-token authentication for atlas-serve (--api-key, --api-key-env, --api-key-file), in
// the manner of vLLM's --api-key: every route except GET /health needs
// `Authorization: Bearer <key>` naming one of the configured keys; otherwise 401 with an
// OpenAI-shaped error (api_error.hpp) and `WWW-Authenticate: Bearer` (RFC 6750 §3).
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/api_error.hpp"

namespace atlas::server {

/// Where keys come from; gathered by the CLI, resolved by load_api_keys().
struct ApiKeySources {
  std::vector<std::string> keys;                 ///< given on the command line (visible in ps: prefer the others)
  std::vector<std::string> env_vars;             ///< names of environment variables, one key each
  std::vector<std::filesystem::path> files;      ///< one key per line; blank lines and lines starting with '#' skipped
};

/// The keys of all sources, in order, duplicates kept once. Throws ServerError naming the
/// source for an empty key, an unset or empty variable, an unreadable file, a file without
/// keys, or a key with whitespace or control characters inside (it could never be sent in a
/// header as written).
std::vector<std::string> load_api_keys(const ApiKeySources& sources);

/// Compares in time that depends only on the lengths of `given` and the key list, never on
/// where a byte first differs, so response timing does not reveal a key prefix by prefix.
/// Every key is compared whatever the result (no early exit).
bool api_key_matches(std::string_view given, const std::vector<std::string>& keys);

/// The 401 for a request whose Authorization header is `authorization` ("" when absent), or
/// nullopt when it carries one of `keys` (or `keys` is empty: authentication is off). The
/// scheme "Bearer" is matched case-insensitively (RFC 9110 §11.1).
std::optional<ApiError> check_api_key(std::string_view authorization, const std::vector<std::string>& keys);

}  // namespace atlas::server
