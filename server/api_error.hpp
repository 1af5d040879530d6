#pragma once
// An error answered to an HTTP client, in the OpenAI error shape:
//   {"error": {"message": "...", "type": "...", "param": "..." | null, "code": "..." | null}}
// Statuses: 400 bad request (malformed JSON, wrong types, unknown model, prompt too long),
// 404 unknown route, 413 body too large, 429 queue full, 503 draining/shutting down,
// 500 an engine failure.
#include <string>

#include <nlohmann/json.hpp>

namespace atlas::server {

struct ApiError {
  int status = 400;
  std::string type = "invalid_request_error";
  std::string message;
  std::string param;  ///< the offending request field ("" -> null)
  std::string code;   ///< machine-readable reason ("" -> null)

  nlohmann::json to_json() const {
    return {{"error",
             {{"message", message},
              {"type", type},
              {"param", param.empty() ? nlohmann::json(nullptr) : nlohmann::json(param)},
              {"code", code.empty() ? nlohmann::json(nullptr) : nlohmann::json(code)}}}};
  }
};

inline ApiError bad_request(std::string message, std::string param = {}, std::string code = {}) {
  return ApiError{400, "invalid_request_error", std::move(message), std::move(param), std::move(code)};
}

}  // namespace atlas::server
