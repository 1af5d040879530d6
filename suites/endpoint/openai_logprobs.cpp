#include "suites/endpoint/openai_logprobs.hpp"

#include <algorithm>
#include <charconv>
#include <string>

namespace atlas::suites::endpoint {

namespace {
using nlohmann::json;

/// The id of a "token_id:N" string, else -1.
int id_of_token_string(const std::string& t) {
  static constexpr std::string_view kPrefix = "token_id:";
  if (!t.starts_with(kPrefix)) return -1;
  int id = -1;
  const char* end = t.data() + t.size();
  const auto [p, ec] = std::from_chars(t.data() + kPrefix.size(), end, id);
  return ec == std::errc() && p == end && id >= 0 ? id : -1;
}

/// {"token", "logprob", "id"?} -> ReportedLogprob; false when token or logprob has the wrong type.
bool read_entry(const json& e, ReportedLogprob& out) {
  if (!e.is_object()) return false;
  auto t = e.find("token");
  auto lp = e.find("logprob");
  if (t == e.end() || !t->is_string() || lp == e.end() || !lp->is_number()) return false;
  out.token = t->get<std::string>();
  out.logprob = lp->get<double>();
  if (auto id = e.find("id"); id != e.end() && id->is_number_integer()) {
    out.id = id->get<int>();
  } else {
    out.id = id_of_token_string(out.token);
  }
  return true;
}
}  // namespace

void append_openai_logprobs(const json& logprobs, std::vector<ReportedTokenLogprobs>& out) {
  if (!logprobs.is_object()) return;
  if (auto content = logprobs.find("content"); content != logprobs.end() && content->is_array()) {
    for (const json& e : *content) {
      ReportedTokenLogprobs t;
      if (!read_entry(e, t.chosen)) continue;
      if (auto top = e.find("top_logprobs"); top != e.end() && top->is_array()) {
        for (const json& a : *top) {
          ReportedLogprob r;
          if (read_entry(a, r)) t.top.push_back(std::move(r));
        }
      }
      out.push_back(std::move(t));
    }
    return;
  }
  auto tokens = logprobs.find("tokens");
  auto lps = logprobs.find("token_logprobs");
  if (tokens == logprobs.end() || !tokens->is_array() || lps == logprobs.end() || !lps->is_array()) return;
  const json* tops = nullptr;
  if (auto tp = logprobs.find("top_logprobs"); tp != logprobs.end() && tp->is_array()) tops = &*tp;
  for (std::size_t i = 0; i < tokens->size() && i < lps->size(); ++i) {
    const json& tk = (*tokens)[i];
    const json& lp = (*lps)[i];
    if (!tk.is_string() || !lp.is_number()) continue;
    ReportedTokenLogprobs t;
    t.chosen = {tk.get<std::string>(), lp.get<double>(), id_of_token_string(tk.get<std::string>())};
    if (tops && i < tops->size() && (*tops)[i].is_object()) {
      for (const auto& [k, v] : (*tops)[i].items()) {
        if (v.is_number()) t.top.push_back({k, v.get<double>(), id_of_token_string(k)});
      }
      // A JSON object has no order: most likely first, then by token string.
      std::sort(t.top.begin(), t.top.end(), [](const ReportedLogprob& a, const ReportedLogprob& b) {
        return a.logprob > b.logprob || (a.logprob == b.logprob && a.token < b.token);
      });
    }
    out.push_back(std::move(t));
  }
}

}  // namespace atlas::suites::endpoint
