#include "suites/agentic/trace.hpp"

#include <algorithm>

#include "common/json_file.hpp"
#include "suites/error.hpp"

namespace atlas::suites {

const char* to_string(TraceRole r) {
  switch (r) {
    case TraceRole::user: return "user";
    case TraceRole::tool: return "tool";
    case TraceRole::assistant: return "assistant";
  }
  return "?";
}

int AgenticTrace::assistant_turns() const {
  int n = 0;
  for (const auto& m : messages) n += m.role == TraceRole::assistant;
  return n;
}

namespace {

class Checker {
 public:
  explicit Checker(std::string source) : source_(std::move(source)) {}
  [[noreturn]] void fail(const std::string& field, const std::string& why, const nlohmann::json* got) const {
    std::string msg = source_ + ": " + field + " " + why;
    if (got) msg += ", got " + got->dump();
    throw SuiteError(msg);
  }
  std::string str(const nlohmann::json& obj, const std::string& key, const std::string& path, bool required) const {
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required) fail(path + key, "is required", nullptr);
      return {};
    }
    if (!it->is_string()) fail(path + key, "must be a string", &*it);
    return it->get<std::string>();
  }

 private:
  std::string source_;
};

}  // namespace

AgenticTrace parse_trace(const nlohmann::json& j, const std::string& source) {
  Checker c(source);
  if (!j.is_object()) c.fail("(top level)", "must be a JSON object", &j);
  for (const auto& [key, value] : j.items()) {
    static const std::vector<std::string> known{"format", "version", "name", "description", "system", "tools", "turns"};
    if (std::find(known.begin(), known.end(), key) == known.end()) c.fail(key, "is not a trace field", nullptr);
  }
  if (c.str(j, "format", "", true) != "atlas-agentic-trace") c.fail("format", "must be \"atlas-agentic-trace\"", &j["format"]);
  auto ver = j.find("version");
  if (ver == j.end() || !ver->is_number_integer() || ver->get<int>() != 1) {
    c.fail("version", "must be 1", ver == j.end() ? nullptr : &*ver);
  }
  AgenticTrace t;
  t.source = source;
  t.name = c.str(j, "name", "", true);
  if (t.name.empty() || t.name.find_first_of("/ =") != std::string::npos) {
    c.fail("name", "must be non-empty without '/', ' ' or '=' (it prefixes metric names)", &j["name"]);
  }
  t.description = c.str(j, "description", "", false);
  t.system = c.str(j, "system", "", false);
  if (auto it = j.find("tools"); it != j.end()) {
    if (!it->is_array()) c.fail("tools", "must be an array of OpenAI tool schemas", &*it);
    for (std::size_t i = 0; i < it->size(); ++i) {
      const auto& tool = (*it)[i];
      const std::string p = "tools[" + std::to_string(i) + "]";
      if (!tool.is_object() || !tool.contains("function") || !tool["function"].is_object()) {
        c.fail(p, "must be {\"type\": \"function\", \"function\": {...}}", &tool);
      }
      c.str(tool["function"], "name", p + ".function.", true);
    }
    t.tools = *it;
  }
  auto turns = j.find("turns");
  if (turns == j.end()) c.fail("turns", "is required", nullptr);
  if (!turns->is_array() || turns->empty()) c.fail("turns", "must be a non-empty array", &*turns);
  for (std::size_t i = 0; i < turns->size(); ++i) {
    const auto& m = (*turns)[i];
    const std::string p = "turns[" + std::to_string(i) + "].";
    if (!m.is_object()) c.fail("turns[" + std::to_string(i) + "]", "must be an object", &m);
    for (const auto& [key, value] : m.items()) {
      static const std::vector<std::string> known{"role", "name", "text", "tokens", "max_tokens", "think_ms"};
      if (std::find(known.begin(), known.end(), key) == known.end()) c.fail(p + key, "is not a turn field", nullptr);
    }
    TraceMessage msg;
    const std::string role = c.str(m, "role", p, true);
    if (role == "user") msg.role = TraceRole::user;
    else if (role == "tool") msg.role = TraceRole::tool;
    else if (role == "assistant") msg.role = TraceRole::assistant;
    else c.fail(p + "role", "must be \"user\", \"tool\" or \"assistant\"", &m["role"]);
    if (auto it = m.find("think_ms"); it != m.end()) {
      if (!it->is_number() || it->get<double>() < 0) c.fail(p + "think_ms", "must be a number >= 0", &*it);
      msg.think_ms = it->get<double>();
    }
    if (msg.role == TraceRole::assistant) {
      auto mt = m.find("max_tokens");
      if (mt == m.end()) c.fail(p + "max_tokens", "is required for an assistant turn", nullptr);
      if (!mt->is_number_integer() || mt->get<long long>() < 1 || mt->get<long long>() > 1'000'000) {
        c.fail(p + "max_tokens", "must be an integer >= 1", &*mt);
      }
      msg.max_tokens = mt->get<int>();
      if (m.contains("text") || m.contains("tokens")) {
        c.fail(p + (m.contains("text") ? "text" : "tokens"), "is not allowed on an assistant turn (it is generated)", nullptr);
      }
      if (i == 0 || (*turns)[i - 1].value("role", "") == "assistant") {
        c.fail(p + "role", "assistant must follow a user or tool message", &m["role"]);
      }
    } else {
      if (m.contains("max_tokens")) c.fail(p + "max_tokens", "is only allowed on an assistant turn", &m["max_tokens"]);
      const bool has_text = m.contains("text"), has_tokens = m.contains("tokens");
      if (has_text == has_tokens) c.fail(p + "text", "exactly one of text or tokens is required", nullptr);
      if (has_text) msg.text = c.str(m, "text", p, true);
      if (has_tokens) {
        const auto& tk = m["tokens"];
        if (!tk.is_number_integer() || tk.get<long long>() < 1 || tk.get<long long>() > 1'000'000) {
          c.fail(p + "tokens", "must be an integer >= 1", &tk);
        }
        msg.tokens = tk.get<int>();
      }
      if (msg.role == TraceRole::tool) {
        msg.name = c.str(m, "name", p, true);
      } else if (m.contains("name")) {
        c.fail(p + "name", "is only allowed on a tool message", &m["name"]);
      }
    }
    t.messages.push_back(std::move(msg));
  }
  if (t.messages.front().role != TraceRole::user) c.fail("turns[0].role", "must be \"user\"", &(*turns)[0]["role"]);
  if (t.messages.back().role != TraceRole::assistant) {
    c.fail("turns[" + std::to_string(t.messages.size() - 1) + "].role",
           "must be \"assistant\" (messages after the last assistant turn would never be sent)", &turns->back()["role"]);
  }
  return t;
}

AgenticTrace load_trace(const std::filesystem::path& path) {
  return parse_trace(atlas::read_json_file(path), path.string());
}

}  // namespace atlas::suites
