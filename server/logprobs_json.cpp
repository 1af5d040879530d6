#include "server/logprobs_json.hpp"

#include <cmath>
#include <cstdio>

#include "engine/tokenizer/unicode.hpp"

namespace atlas::server {

using nlohmann::json;

double wire_logprob(float lp) {
  if (std::isinf(lp) && lp < 0) return -9999.0;
  return static_cast<double>(lp);
}

namespace {
bool valid_utf8(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto d = engine::unicode::decode_utf8(s, i);
    if (!d.valid) return false;
    i += static_cast<std::size_t>(d.len);
  }
  return true;
}

json byte_list(const std::string& b) {
  json a = json::array();
  for (unsigned char c : b) a.push_back(static_cast<int>(c));
  return a;
}
}  // namespace

std::string LogprobsJson::token_string(int id, const std::string& bytes) const {
  if (as_ids_) return "token_id:" + std::to_string(id);
  if (valid_utf8(bytes)) return bytes;
  std::string s = "bytes:";
  for (unsigned char c : bytes) {
    char buf[5];
    std::snprintf(buf, sizeof buf, "\\x%02x", c);
    s += buf;
  }
  return s;
}

void LogprobsJson::add(int prev, const engine::TokenLogprobs& lp) {
  const std::string bytes = tok_.token_bytes(prev, lp.chosen.id);
  const std::string text = token_string(lp.chosen.id, bytes);
  if (chat_) {
    json top = json::array();
    for (const auto& t : lp.top) {
      const std::string b = tok_.token_bytes(prev, t.id);
      top.push_back({{"token", token_string(t.id, b)}, {"logprob", wire_logprob(t.logprob)}, {"bytes", byte_list(b)}, {"id", t.id}});
    }
    pending_.push_back({{"token", text},
                        {"logprob", wire_logprob(lp.chosen.logprob)},
                        {"bytes", byte_list(bytes)},
                        {"id", lp.chosen.id},
                        {"top_logprobs", std::move(top)}});
    return;
  }
  json dict = json::object();
  dict[text] = wire_logprob(lp.chosen.logprob);
  for (const auto& t : lp.top) dict[token_string(t.id, tok_.token_bytes(prev, t.id))] = wire_logprob(t.logprob);
  pending_.push_back(json::array({text, wire_logprob(lp.chosen.logprob), std::move(dict), chars_}));
  for (unsigned char c : bytes) {
    if ((c & 0xC0) != 0x80) ++chars_;  // not a continuation byte: a character starts here
  }
}

json LogprobsJson::take() {
  if (pending_.empty()) return nullptr;
  json out;
  if (chat_) {
    out = {{"content", std::move(pending_)}, {"refusal", nullptr}};
  } else {
    json tokens = json::array(), lps = json::array(), tops = json::array(), offsets = json::array();
    for (auto& e : pending_) {
      tokens.push_back(std::move(e[0]));
      lps.push_back(std::move(e[1]));
      tops.push_back(std::move(e[2]));
      offsets.push_back(std::move(e[3]));
    }
    out = {{"tokens", std::move(tokens)}, {"token_logprobs", std::move(lps)}, {"top_logprobs", std::move(tops)}, {"text_offset", std::move(offsets)}};
  }
  pending_ = json::array();
  return out;
}

}  // namespace atlas::server
