#include "server/tool_calls.hpp"

#include <cctype>
#include <utility>

#include "chat/chat_template.hpp"
#include "common/json_depth.hpp"

namespace atlas::server {

namespace {
constexpr std::string_view kOpen = "<tool_call>";
constexpr std::string_view kClose = "</tool_call>";

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

/// {"name": ..., "arguments": {...} or "..."} (also "parameters" as some models write).
bool parse_hermes_body(std::string_view body, ToolCall& call) {
  // Printing the arguments recurses once per level: a model told to emit 100,000 '[' would
  // overflow the server's stack. Deeper than any tool schema: not a call, the text stays.
  if (json_nesting_depth(body, kMaxJsonNesting) > kMaxJsonNesting) return false;
  auto j = nlohmann::ordered_json::parse(trim(body), nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("name") || !j["name"].is_string()) return false;
  call.name = j["name"].get<std::string>();
  const char* key = j.contains("arguments") ? "arguments" : "parameters";
  if (!j.contains(key) || j[key].is_null()) {
    call.arguments = "{}";
  } else if (j[key].is_string()) {
    call.arguments = j[key].get<std::string>();
  } else {
    call.arguments = chat::python_json_dumps(j[key]);
  }
  return true;
}

// --- Python literal parser for `[f(a=1, b='x')]` -------------------------------------------
class PyParser {
 public:
  explicit PyParser(std::string_view s) : s_(s) {}

  bool calls(std::vector<ToolCall>& out) {
    ws();
    if (!eat('[')) return false;
    ws();
    if (eat(']')) return false;  // an empty list is not a call
    while (true) {
      ToolCall c;
      if (!call(c)) return false;
      out.push_back(std::move(c));
      ws();
      if (eat(']')) break;
      if (!eat(',')) return false;
      ws();
    }
    ws();
    return p_ == s_.size();
  }

 private:
  void ws() {
    while (p_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[p_]))) ++p_;
  }
  bool eat(char c) {
    if (p_ < s_.size() && s_[p_] == c) {
      ++p_;
      return true;
    }
    return false;
  }
  bool ident(std::string& out) {
    const std::size_t b = p_;
    while (p_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[p_])) || s_[p_] == '_' || s_[p_] == '.' || s_[p_] == '-')) ++p_;
    if (p_ == b || std::isdigit(static_cast<unsigned char>(s_[b]))) return false;
    out.assign(s_.substr(b, p_ - b));
    return true;
  }
  bool call(ToolCall& c) {
    if (!ident(c.name)) return false;
    ws();
    if (!eat('(')) return false;
    nlohmann::ordered_json args = nlohmann::ordered_json::object();
    ws();
    if (!eat(')')) {
      while (true) {
        ws();
        std::string key;
        if (!ident(key)) return false;
        ws();
        if (!eat('=')) return false;
        ws();
        nlohmann::ordered_json v;
        if (!value(v)) return false;
        args[key] = std::move(v);
        ws();
        if (eat(')')) break;
        if (!eat(',')) return false;
        ws();
        if (eat(')')) break;  // trailing comma
      }
    }
    c.arguments = chat::python_json_dumps(args);
    return true;
  }
  bool value(nlohmann::ordered_json& v) {
    if (p_ >= s_.size()) return false;
    // One frame per nesting level (and the arguments are printed recursively later): output
    // nested deeper than any tool schema is not a call list, so a generation of 100,000 '['
    // cannot overflow the stack.
    if (depth_ >= kMaxJsonNesting) return false;
    struct Level {
      std::size_t& d;
      explicit Level(std::size_t& depth) : d(++depth) {}
      ~Level() { --d; }
    } level(depth_);
    const char c = s_[p_];
    if (c == '\'' || c == '"') {
      std::string str;
      if (!string(str)) return false;
      v = str;
      return true;
    }
    if (c == '[' || c == '(') {
      const char close = c == '[' ? ']' : ')';
      ++p_;
      v = nlohmann::ordered_json::array();
      ws();
      while (!eat(close)) {
        nlohmann::ordered_json x;
        if (!value(x)) return false;
        v.push_back(std::move(x));
        ws();
        if (eat(close)) break;
        if (!eat(',')) return false;
        ws();
      }
      return true;
    }
    if (c == '{') {
      ++p_;
      v = nlohmann::ordered_json::object();
      ws();
      while (!eat('}')) {
        nlohmann::ordered_json k, x;
        if (!value(k)) return false;
        ws();
        if (!eat(':')) return false;
        ws();
        if (!value(x)) return false;
        v[k.is_string() ? k.get<std::string>() : k.dump()] = std::move(x);
        ws();
        if (eat('}')) break;
        if (!eat(',')) return false;
        ws();
      }
      return true;
    }
    if (c == '-' || c == '+' || std::isdigit(static_cast<unsigned char>(c))) {
      const std::size_t b = p_;
      ++p_;
      while (p_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[p_])) || s_[p_] == '.' || s_[p_] == 'e' ||
                                s_[p_] == 'E' || s_[p_] == '-' || s_[p_] == '+' || s_[p_] == '_')) ++p_;
      std::string num(s_.substr(b, p_ - b));
      std::erase(num, '_');
      if (num.front() == '+') num.erase(0, 1);
      auto j = nlohmann::ordered_json::parse(num, nullptr, false);
      if (j.is_discarded() || !j.is_number()) return false;
      v = j;
      return true;
    }
    std::string word;
    if (!ident(word)) return false;
    if (word == "True" || word == "true") v = true;
    else if (word == "False" || word == "false") v = false;
    else if (word == "None" || word == "null") v = nullptr;
    else return false;
    return true;
  }
  bool string(std::string& out) {
    const char q = s_[p_++];
    while (p_ < s_.size()) {
      const char c = s_[p_++];
      if (c == q) return true;
      if (c == '\\' && p_ < s_.size()) {
        const char e = s_[p_++];
        switch (e) {
          case 'n': out += '\n'; break;
          case 't': out += '\t'; break;
          case 'r': out += '\r'; break;
          default: out += e;
        }
        continue;
      }
      out += c;
    }
    return false;
  }

  std::string_view s_;
  std::size_t p_ = 0;
  std::size_t depth_ = 0;
};

/// Length of the longest suffix of `s` that is a proper prefix of `tag`.
std::size_t partial_tag_suffix(std::string_view s, std::string_view tag) {
  for (std::size_t n = std::min(s.size(), tag.size() - 1); n > 0; --n) {
    if (s.substr(s.size() - n) == tag.substr(0, n)) return n;
  }
  return 0;
}
}  // namespace

bool parse_pythonic_calls(std::string_view text, std::vector<ToolCall>& out) {
  out.clear();
  return PyParser(text).calls(out);
}

ToolCallParse parse_tool_calls(std::string_view text) {
  ToolCallParse r;
  if (parse_pythonic_calls(text, r.calls)) return r;
  r.calls.clear();
  std::string content;
  std::size_t pos = 0;
  while (true) {
    const std::size_t open = text.find(kOpen, pos);
    if (open == std::string_view::npos) {
      content.append(text.substr(pos));
      break;
    }
    const std::size_t body = open + kOpen.size();
    const std::size_t close = text.find(kClose, body);
    const std::string_view inner = text.substr(body, close == std::string_view::npos ? std::string_view::npos : close - body);
    ToolCall call;
    if (parse_hermes_body(inner, call)) {
      content.append(text.substr(pos, open - pos));
      r.calls.push_back(std::move(call));
    } else {
      content.append(text.substr(pos, close == std::string_view::npos ? std::string_view::npos : close + kClose.size() - pos));
    }
    if (close == std::string_view::npos) break;
    pos = close + kClose.size();
  }
  r.content = r.calls.empty() ? content : std::string(trim(content));
  return r;
}

ToolCallStream::Delta ToolCallStream::push(std::string_view text) {
  Delta d;
  buf_.append(text);
  if (mode_ == Mode::undecided) {
    const std::string_view t = trim(buf_);
    if (t.empty()) return d;
    mode_ = t.front() == '[' ? Mode::pythonic : Mode::text;
  }
  if (mode_ == Mode::pythonic) return d;
  while (true) {
    if (mode_ == Mode::text) {
      const std::size_t open = buf_.find(kOpen);
      if (open == std::string::npos) {
        const std::size_t hold = partial_tag_suffix(buf_, kOpen);
        d.content += buf_.substr(0, buf_.size() - hold);
        buf_.erase(0, buf_.size() - hold);
        return d;
      }
      d.content += buf_.substr(0, open);
      buf_.erase(0, open);
      mode_ = Mode::in_call;
    }
    const std::size_t close = buf_.find(kClose);
    if (close == std::string::npos) return d;
    ToolCall call;
    const std::string_view inner = std::string_view(buf_).substr(kOpen.size(), close - kOpen.size());
    if (parse_hermes_body(inner, call)) {
      d.calls.push_back(std::move(call));
      ++calls_emitted_;
    } else {
      d.content += buf_.substr(0, close + kClose.size());
    }
    buf_.erase(0, close + kClose.size());
    mode_ = Mode::text;
  }
}

ToolCallStream::Delta ToolCallStream::finish() {
  Delta d;
  if (mode_ == Mode::pythonic) {
    std::vector<ToolCall> calls;
    if (parse_pythonic_calls(buf_, calls)) {
      calls_emitted_ += static_cast<int>(calls.size());
      d.calls = std::move(calls);
      buf_.clear();
      return d;
    }
    // Not a Python-call list after all ("[1] <tool_call>...</tool_call>"): the held answer is
    // text that may hold Hermes calls, read as parse_tool_calls reads it, so that a streamed
    // response has the same calls as a non-streamed one.
    mode_ = Mode::text;
    d = push(std::exchange(buf_, std::string()));
  }
  if (mode_ == Mode::in_call) {
    ToolCall call;
    if (parse_hermes_body(std::string_view(buf_).substr(kOpen.size()), call)) {
      d.calls.push_back(std::move(call));
      ++calls_emitted_;
    } else {
      d.content += buf_;
    }
  } else {
    d.content += buf_;
  }
  buf_.clear();
  return d;
}

nlohmann::json tool_calls_json(const std::vector<ToolCall>& calls, const std::string& id_prefix, int first_index) {
  nlohmann::json a = nlohmann::json::array();
  int n = first_index;
  for (const auto& c : calls) {
    a.push_back({{"id", id_prefix + std::to_string(n++)},
                 {"type", "function"},
                 {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
  }
  return a;
}

}  // namespace atlas::server
