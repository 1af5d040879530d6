// Tool calls in generated text (server/tool_calls.hpp): Hermes <tool_call>{...}</tool_call>
// blocks and Python-call lists [f(a=1)]. Model output is outside input too (any fine-tune, any
// sampler temperature). The whole-text parse (non-streaming responses) and ToolCallStream fed in
// chunks of 1-17 bytes (first input byte; streaming responses) must give the same calls and the
// same content (the whole parse trims content around calls); the calls' JSON must print as the
// server sends it, and a Python-call list's arguments must be a JSON object.
#include <nlohmann/json.hpp>

#include "fuzz/fuzz_target.hpp"
#include "server/tool_calls.hpp"

namespace {
std::string_view trim(std::string_view s) {
  const auto sp = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
  while (!s.empty() && sp(s.front())) s.remove_prefix(1);
  while (!s.empty() && sp(s.back())) s.remove_suffix(1);
  return s;
}
}  // namespace

ATLAS_FUZZ_TARGET(tool_calls) {
  using namespace atlas;
  if (size == 0) return 0;
  const std::size_t chunk = 1 + data[0] % 17;
  const std::string_view text = fuzz::text(data + 1, size - 1);

  const server::ToolCallParse whole = server::parse_tool_calls(text);
  server::ToolCallStream stream;
  std::string content;
  std::vector<server::ToolCall> calls;
  auto take = [&](server::ToolCallStream::Delta d) {
    content += d.content;
    for (auto& c : d.calls) calls.push_back(std::move(c));
  };
  for (std::size_t pos = 0; pos < text.size(); pos += chunk) take(stream.push(text.substr(pos, chunk)));
  take(stream.finish());

  fuzz::check(stream.calls_emitted() == static_cast<int>(calls.size()), "calls_emitted() counts the calls");
  fuzz::check(calls.size() == whole.calls.size(), "streamed and whole parse find the same number of calls");
  for (std::size_t i = 0; i < calls.size(); ++i) {
    fuzz::check(calls[i].name == whole.calls[i].name, "streamed and whole parse give the same call names");
    fuzz::check(calls[i].arguments == whole.calls[i].arguments, "streamed and whole parse give the same arguments");
  }
  fuzz::check(whole.content == (calls.empty() ? std::string_view(content) : trim(content)),
              "streamed and whole parse give the same content");
  (void)server::tool_calls_json(whole.calls, "call_").dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);

  std::vector<server::ToolCall> py;
  if (server::parse_pythonic_calls(text, py)) {
    fuzz::check(!py.empty(), "a Python-call list has calls");
    for (const auto& c : py) {
      const auto args = nlohmann::json::parse(c.arguments, nullptr, false);
      fuzz::check(!args.is_discarded() && args.is_object(), "Python-call arguments are a JSON object");
    }
  }
  return 0;
}
