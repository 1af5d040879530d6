#include "suites/bfcl/prompt.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>

namespace atlas::suites::bfcl {

namespace {

using ojson = nlohmann::ordered_json;

constexpr const char* kPythonNote = " Note that the provided function is in Python 3 syntax.";

// PROMPT_STYLE_TEMPLATES["classic"] and _PLAINTEXT_SYSTEM_PROMPT_TEMPLATE
// ("{persona}{task}\n\n{tool_call_format}\n\n{multiturn_behavior}\n\n{available_tools}").
// Upstream joins persona and task with no space; kept as is.
constexpr const char* kPersona = "You are an expert in composing functions.";
constexpr const char* kTask =
    "You are given a question and a set of possible functions. Based on the question, you will need to make one or "
    "more function/tool calls to achieve the purpose. If none of the functions can be used, point it out. If the "
    "given question lacks the parameters required by the function, also point it out.";
// tool_call_no_tag with output_format = OUTPUT_FORMAT_MAPPING["python"] and param_types = ""
// (hence the two spaces before "You SHOULD NOT").
constexpr const char* kToolCallFormat =
    "You should only return the function calls in your response.\n\nIf you decide to invoke any of the function(s), "
    "you MUST put it in the format of [func_name1(params_name1=params_value1, params_name2=params_value2...), "
    "func_name2(params)].  You SHOULD NOT include any other text in the response.";
constexpr const char* kMultiturn =
    "At each turn, you should try your best to complete the tasks requested by the user within the current turn. "
    "Continue to output functions to call until you have fulfilled the user's request to the best of your ability. "
    "Once you have no more functions to call, the system will consider the current turn complete and proceed to the "
    "next turn or task.";

void dump_string(std::string& out, const std::string& s) {
  out += '"';
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else if (c < 0x80) {
          out += static_cast<char>(c);
        } else {
          // ensure_ascii: non-ASCII as \uXXXX (surrogate pairs above the BMP).
          std::size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
          if (i + len > s.size()) len = s.size() - i;
          unsigned cp = len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
          for (std::size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
          i += len - 1;
          char buf[16];
          if (cp >= 0x10000) {
            cp -= 0x10000;
            std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", 0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF));
          } else {
            std::snprintf(buf, sizeof buf, "\\u%04x", cp);
          }
          out += buf;
        }
    }
  }
  out += '"';
}

void dump(std::string& out, const ojson& v, int level) {
  const std::string pad(static_cast<std::size_t>(4 * (level + 1)), ' ');
  const std::string close_pad(static_cast<std::size_t>(4 * level), ' ');
  switch (v.type()) {
    case ojson::value_t::object: {
      if (v.empty()) { out += "{}"; return; }
      out += "{\n";
      bool first = true;
      for (const auto& [k, e] : v.items()) {
        if (!first) out += ",\n";
        first = false;
        out += pad;
        dump_string(out, k);
        out += ": ";
        dump(out, e, level + 1);
      }
      out += "\n" + close_pad + "}";
      return;
    }
    case ojson::value_t::array: {
      if (v.empty()) { out += "[]"; return; }
      out += "[\n";
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (i) out += ",\n";
        out += pad;
        dump(out, v[i], level + 1);
      }
      out += "\n" + close_pad + "]";
      return;
    }
    case ojson::value_t::string: dump_string(out, v.get<std::string>()); return;
    case ojson::value_t::boolean: out += v.get<bool>() ? "true" : "false"; return;
    case ojson::value_t::null: out += "null"; return;
    case ojson::value_t::number_float: {
      // Python float repr; ints stay ints.
      const double d = v.get<double>();
      if (std::isnan(d)) { out += "NaN"; return; }
      if (std::isinf(d)) { out += d > 0 ? "Infinity" : "-Infinity"; return; }
      out += py_repr_float(d);
      return;
    }
    default: out += v.dump(); return;
  }
}

std::string openapi_type(const std::string& t) {
  if (t == "integer" || t == "byte" || t == "short" || t == "long" || t == "Bigint") return "integer";
  if (t == "number" || t == "float" || t == "double") return "number";
  if (t == "boolean" || t == "bool") return "boolean";
  if (t == "array" || t == "list" || t == "tuple" || t == "ArrayList" || t == "Array" || t == "Queue" || t == "Stack") return "array";
  if (t == "dict" || t == "object" || t == "HashMap" || t == "Hashtable") return "object";
  return "string";
}

// _cast_to_openai_type (MU:34-76).
void cast_properties(ojson& properties) {
  for (auto& [key, prop] : properties.items()) {
    if (!prop.is_object()) continue;
    if (!prop.contains("type") || !prop["type"].is_string()) {
      prop["type"] = "string";
    } else {
      const std::string t = prop["type"].get<std::string>();
      if (t == "float") {
        prop["format"] = "float";
        prop["description"] = (prop.contains("description") && prop["description"].is_string()
                                   ? prop["description"].get<std::string>()
                                   : std::string()) + " This is a float type value.";
      }
      prop["type"] = openapi_type(t);
    }
    const std::string t = prop["type"].get<std::string>();
    if (t == "array" || t == "object") {
      if (prop.contains("properties") && prop["properties"].is_object()) {
        cast_properties(prop["properties"]);
      } else if (prop.contains("items") && prop["items"].is_object() && prop["items"].contains("type") &&
                 prop["items"]["type"].is_string()) {
        ojson& items = prop["items"];
        items["type"] = openapi_type(items["type"].get<std::string>());
        if (items["type"] == "array" && items.contains("items") && items["items"].is_object() &&
            items["items"].contains("type") && items["items"]["type"].is_string()) {
          items["items"]["type"] = openapi_type(items["items"]["type"].get<std::string>());
        } else if (items["type"] == "object" && items.contains("properties") && items["properties"].is_object()) {
          cast_properties(items["properties"]);
        }
      }
    }
  }
}

std::string capitalised(std::string role) {
  if (!role.empty()) role[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(role[0])));
  return role;
}

}  // namespace

std::string python_json_dumps_indent4(const nlohmann::ordered_json& v) {
  std::string out;
  dump(out, v, 0);
  return out;
}

nlohmann::ordered_json functions_for_generation(const BfclEntry& entry) {
  ojson out = ojson::array();
  for (const auto& f : entry.functions) {
    ojson doc = f.raw;
    if (doc.contains("description") && doc["description"].is_string()) {
      doc["description"] = doc["description"].get<std::string>() + kPythonNote;
    }
    out.push_back(std::move(doc));
  }
  return out;
}

std::string system_prompt(const nlohmann::ordered_json& functions) {
  std::string s = std::string(kPersona) + kTask + "\n\n" + kToolCallFormat + "\n\n" + kMultiturn + "\n\n";
  s += "Here is a list of functions in json format that you can invoke.\n" + python_json_dumps_indent4(functions) + "\n";
  return s;
}

nlohmann::ordered_json prompt_messages(const BfclEntry& entry) {
  ojson messages = entry.question.at(0);
  const std::string sys = system_prompt(functions_for_generation(entry));
  if (!messages.empty() && messages[0]["role"] == "system") {
    messages[0]["content"] = sys + "\n\n" + messages[0]["content"].get<std::string>();
  } else {
    messages.insert(messages.begin(), ojson{{"role", "system"}, {"content", sys}});
  }
  return messages;
}

std::string render_plain_text(const nlohmann::ordered_json& messages) {
  std::string out;
  for (const auto& m : messages) {
    out += capitalised(m["role"].get<std::string>()) + ": " + m["content"].get<std::string>() + "\n\n";
  }
  return out + "Assistant:";
}

nlohmann::ordered_json openai_tools(const BfclEntry& entry, bool underscore_to_dot) {
  ojson tools = ojson::array();
  for (ojson item : functions_for_generation(entry)) {
    if (underscore_to_dot) {
      std::string name = item["name"].get<std::string>();
      for (char& c : name) {
        if (c == '.') c = '_';
      }
      item["name"] = name;
    }
    item["parameters"]["type"] = "object";
    cast_properties(item["parameters"]["properties"]);
    tools.push_back(ojson{{"type", "function"}, {"function", item}});
  }
  return tools;
}

}  // namespace atlas::suites::bfcl
