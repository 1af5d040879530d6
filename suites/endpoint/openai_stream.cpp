#include "suites/endpoint/openai_stream.hpp"

#include <algorithm>

#include "common/json_depth.hpp"
#include "suites/endpoint/openai_logprobs.hpp"

namespace atlas::suites::endpoint {

namespace {
using nlohmann::json;

std::string excerpt(const std::string& s) { return s.size() <= 120 ? s : s.substr(0, 120) + "..."; }

int int_field(const json& o, const char* key) {
  if (!o.is_object()) return 0;
  auto it = o.find(key);
  return it != o.end() && it->is_number_integer() ? it->get<int>() : 0;
}
}  // namespace

void OpenAiStreamReader::fail(std::string why) {
  if (error_.empty()) error_ = std::move(why);
}

void OpenAiStreamReader::on_event(const SseEvent& ev, std::int64_t t_ns, std::uint64_t wake) {
  if (!error_.empty()) return;
  ++events_;
  if (done_) {
    fail("event after data: [DONE] (event #" + std::to_string(events_) + ")");
    return;
  }
  if (ev.data == "[DONE]") {
    done_ = true;
    return;
  }
  // A hostile server's event nested 100,000 deep would overflow the stack when printed.
  if (atlas::json_nesting_depth(ev.data, atlas::kMaxJsonNesting) > atlas::kMaxJsonNesting) {
    fail("SSE event #" + std::to_string(events_) + " nests arrays/objects deeper than " + std::to_string(atlas::kMaxJsonNesting) + " levels");
    return;
  }
  json j = json::parse(ev.data, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    fail("malformed SSE event #" + std::to_string(events_) + " (not a JSON object): " + excerpt(ev.data));
    return;
  }
  if (auto e = j.find("error"); e != j.end()) {
    std::string msg = e->is_object() && e->contains("message") && (*e)["message"].is_string()
                          ? (*e)["message"].get<std::string>()
                          : e->dump();
    fail("server error in stream: " + msg);
    return;
  }
  // The server's cumulative count of generated tokens on this chunk, where it sends one.
  int chunk_count = -1;
  std::string count_source;
  if (auto tm = j.find("timings"); tm != j.end() && tm->is_object()) {
    timings_ = *tm;
    if (auto pn = tm->find("predicted_n"); pn != tm->end() && pn->is_number_integer() && pn->get<int>() >= 0) {
      chunk_count = pn->get<int>();
      count_source = "server timings per chunk";
    }
  }
  if (auto u = j.find("usage"); u != j.end() && u->is_object()) {
    StreamUsage su;
    su.prompt_tokens = int_field(*u, "prompt_tokens");
    su.completion_tokens = int_field(*u, "completion_tokens");
    if (auto d = u->find("prompt_tokens_details"); d != u->end()) su.cached_tokens = int_field(*d, "cached_tokens");
    usage_ = su;
    chunk_count = su.completion_tokens;
    count_source = "server usage per chunk";
  }
  auto ch = j.find("choices");
  if (ch == j.end()) {
    if (!j.contains("usage")) fail("SSE event #" + std::to_string(events_) + " has neither choices nor usage: " + excerpt(ev.data));
    return;
  }
  if (!ch->is_array()) {
    fail("SSE event #" + std::to_string(events_) + ": choices is not an array");
    return;
  }
  if (ch->empty()) {  // usage-only chunk: its count belongs to the last token-bearing chunk
    if (chunk_count >= 0 && !chunks_.empty()) chunks_.back().cumulative_tokens = chunk_count;
    if (chunk_count > 0 && chunks_.empty()) stamp_unstreamed_tokens(t_ns, wake, chunk_count);
    return;
  }
  const json& c = (*ch)[0];
  if (!c.is_object()) {
    fail("SSE event #" + std::to_string(events_) + ": choices[0] is not an object");
    return;
  }
  const bool finish = c.contains("finish_reason") && c["finish_reason"].is_string();
  if (finish) finish_reason_ = c["finish_reason"].get<std::string>();
  std::string piece;
  bool carries = false;
  if (auto t = c.find("text"); t != c.end() && t->is_string()) piece += t->get<std::string>();
  if (auto d = c.find("delta"); d != c.end() && d->is_object()) {
    for (const char* key : {"content", "reasoning_content", "reasoning"}) {
      if (auto x = d->find(key); x != d->end() && x->is_string()) piece += x->get<std::string>();
    }
    if (auto tc = d->find("tool_calls"); tc != d->end() && tc->is_array()) {
      for (const json& call : *tc) {
        if (!call.is_object()) continue;
        const std::size_t idx = call.contains("index") && call["index"].is_number_unsigned()
                                    ? call["index"].get<std::size_t>()
                                    : tool_calls_.size() - (tool_calls_.empty() ? 0 : 1);
        // Calls fill the list up to their index: a hostile index (8,200,576,419,795 from
        // fuzz_sse_stream) would allocate until the process is killed.
        if (idx >= kMaxStreamToolCalls) {
          fail("SSE event #" + std::to_string(events_) + ": tool_calls index " + std::to_string(idx) + " is beyond " +
               std::to_string(kMaxStreamToolCalls) + " calls");
          return;
        }
        while (tool_calls_.size() <= idx) {
          tool_calls_.push_back({{"id", ""}, {"type", "function"}, {"function", {{"name", ""}, {"arguments", ""}}}});
        }
        json& dst = tool_calls_[idx];
        if (call.contains("id") && call["id"].is_string()) dst["id"] = call["id"];
        if (auto f = call.find("function"); f != call.end() && f->is_object()) {
          if (f->contains("name") && (*f)["name"].is_string()) {
            dst["function"]["name"] = dst["function"]["name"].get<std::string>() + (*f)["name"].get<std::string>();
            piece += (*f)["name"].get<std::string>();
          }
          if (f->contains("arguments") && (*f)["arguments"].is_string()) {
            dst["function"]["arguments"] =
                dst["function"]["arguments"].get<std::string>() + (*f)["arguments"].get<std::string>();
            piece += (*f)["arguments"].get<std::string>();
          }
        }
        carries = true;
      }
    }
    if (auto x = d->find("content"); x != d->end() && x->is_string()) text_ += x->get<std::string>();
  } else if (auto t = c.find("text"); t != c.end() && t->is_string()) {
    text_ += t->get<std::string>();
  }
  if (auto lp = c.find("logprobs"); lp != c.end()) append_openai_logprobs(*lp, logprobs_);
  // Token ids of this chunk: vLLM's/atlas-serve's `token_ids`, else llama.cpp's logprobs entries.
  std::vector<int> ids;
  bool listed = false;
  if (auto ti = c.find("token_ids"); ti != c.end() && ti->is_array()) {
    listed = true;
    for (const json& id : *ti) {
      if (id.is_number_integer()) ids.push_back(id.get<int>());
    }
  } else if (auto lp = c.find("logprobs"); lp != c.end() && lp->is_object()) {
    if (auto content = lp->find("content"); content != lp->end() && content->is_array()) {
      listed = true;
      for (const json& e : *content) {
        if (e.is_object() && e.contains("id") && e["id"].is_number_integer()) ids.push_back(e["id"].get<int>());
      }
    }
  } else if (auto tk = j.find("tokens"); tk != j.end() && tk->is_array()) {
    listed = true;
    for (const json& id : *tk) {
      if (id.is_number_integer()) ids.push_back(id.get<int>());
    }
  }
  // A count on the finish chunk of a stream that sent none before is the final usage (llama.cpp
  // puts it there): it says nothing about this chunk. Before the finish, or once counts are
  // streamed, a count that grew says the chunk carried tokens, whatever its text.
  const bool per_chunk_count = chunk_count >= 0 && (!finish || counts_streamed_);
  if (per_chunk_count && !finish) counts_streamed_ = true;
  if (per_chunk_count && cumulative_source_.empty()) cumulative_source_ = count_source;
  const bool count_grew = per_chunk_count && chunk_count > cumulative_;
  if (per_chunk_count) cumulative_ = std::max(cumulative_, chunk_count);
  if (!piece.empty() || !ids.empty() || count_grew) carries = true;
  if (!carries) {
    if (chunk_count >= 0 && !chunks_.empty()) chunks_.back().cumulative_tokens = chunk_count;
    // Tokens the server counted on its finish chunk but never streamed before it (llama.cpp
    // holds back a token that completes no UTF-8 character and drops the incomplete bytes at
    // the end): they reached the client with this chunk, the first sign that they exist.
    if (finish && chunk_count > 0 && chunks_.empty()) stamp_unstreamed_tokens(t_ns, wake, chunk_count);
    return;
  }
  if (listed) ids_seen_ = true;
  if (ids.empty()) ++ids_missing_;
  token_ids_.insert(token_ids_.end(), ids.begin(), ids.end());
  chunks_.push_back({t_ns, wake, std::move(piece), static_cast<int>(ids.size()), chunk_count});
}

void OpenAiStreamReader::stamp_unstreamed_tokens(std::int64_t t_ns, std::uint64_t wake, int count) {
  cumulative_ = std::max(cumulative_, count);
  cumulative_source_ = "server count on the finish chunk, no token streamed before it";
  ++ids_missing_;
  chunks_.push_back({t_ns, wake, std::string(), 0, count});
}

nlohmann::json OpenAiStreamReader::tool_calls() const {
  return tool_calls_.empty() ? nlohmann::json(nullptr) : tool_calls_;
}

}  // namespace atlas::suites::endpoint
