// Request bodies nested far deeper than any real request (before the fix 100,000 levels crashed
// atlas-serve: the wrong-type message printed the value, recursing once per level).
#if ATLAS_HAVE_HTTPLIB
#include <doctest/doctest.h>

#include <string>

#include "server/openai_request.hpp"

using atlas::server::ApiError;
using atlas::server::parse_completion_request;

namespace {
ApiError error_of(const std::string& body, bool chat) {
  try {
    parse_completion_request(body, chat);
  } catch (const ApiError& e) {
    return e;
  }
  return ApiError{0, "", "(no error)", "", ""};
}
}  // namespace

TEST_CASE("openai request: a body nested 100,000 deep is a 400 naming the limit, not a stack overflow") {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  for (const std::string field : {"messages", "max_tokens", "tools", "stop"}) {
    CAPTURE(field);
    const ApiError e = error_of(R"({"model": "m", "prompt": "x", "messages": [{"role": "user", "content": "x"}], ")" + field + "\": " + deep + "}", true);
    CHECK(e.status == 400);
    CHECK(e.code == "invalid_json");
    CHECK(e.message == "request body nests arrays/objects deeper than 256 levels");
  }
  std::string objects = R"({"model": "m", "prompt": )";
  for (int i = 0; i < 50000; ++i) objects += R"({"a":)";
  objects += "1" + std::string(50000, '}') + "}";
  CHECK(error_of(objects, false).message == "request body nests arrays/objects deeper than 256 levels");
  // 256 levels are still parsed (and then judged field by field).
  const ApiError ok_depth = error_of(R"({"model": "m", "prompt": "x", "max_tokens": )" + std::string(255, '[') + std::string(255, ']') + "}", false);
  CHECK(ok_depth.param == "max_tokens");
  CHECK(ok_depth.code == "invalid_type");
}
#endif
