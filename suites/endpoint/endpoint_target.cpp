#include "suites/endpoint/endpoint_target.hpp"

#include <algorithm>
#include <cstdlib>
#include <random>

#include "common/clock.hpp"
#include "suites/endpoint/error.hpp"
#include "suites/endpoint/openai_stream.hpp"
#include "suites/endpoint/sse_parser.hpp"
#include "suites/endpoint/stream_timing.hpp"

namespace atlas::suites::endpoint {

using nlohmann::json;

std::string endpoint_root(const std::string& url) {
  std::string u = url;
  while (!u.empty() && u.back() == '/') u.pop_back();
  if (u.size() >= 3 && u.compare(u.size() - 3, 3, "/v1") == 0) u.resize(u.size() - 3);
  return u;
}

namespace {
/// Tokens per token-bearing chunk and their total, from the best source the stream offers:
///  1. the server's token ids per chunk (exact);
///  2. the server's cumulative count sent on the chunks (vLLM continuous_usage_stats' usage,
///     llama.cpp's timings.predicted_n with timings_per_token);
///  3. the local tokenizer, counting each chunk as the growth of the encoded text so far (a
///     chunk encoded on its own would gain a leading-space token: "4 tokens counted as 8"),
///     the text's one leading space left out (the same dummy-prefix token once more);
///  4. one per chunk.
/// When the final usage gives a different total, the counts are scaled to it (distribute_tokens).
struct ChunkTokenCounts {
  std::vector<int> per_chunk;
  int total = 0;
  std::string source;
};

ChunkTokenCounts chunk_token_counts(const OpenAiStreamReader& reader, const engine::Tokenizer* tok) {
  const auto& chunks = reader.chunks();
  const std::size_t n = chunks.size();
  ChunkTokenCounts c;
  c.per_chunk.assign(n, 1);
  bool all_ids = n > 0, all_usage = n > 0;
  for (const auto& ch : chunks) {
    all_ids = all_ids && ch.ids > 0;
    all_usage = all_usage && ch.cumulative_tokens >= 0;
  }
  if (all_ids) {
    for (std::size_t i = 0; i < n; ++i) c.per_chunk[i] = chunks[i].ids;
    c.source = "server token ids";
  } else if (all_usage) {
    int prev = 0;
    for (std::size_t i = 0; i < n; ++i) {
      c.per_chunk[i] = std::max(1, chunks[i].cumulative_tokens - prev);
      prev = std::max(prev, chunks[i].cumulative_tokens);
    }
    c.source = reader.cumulative_source().empty() ? "server usage per chunk" : reader.cumulative_source();
  } else if (tok) {
    std::string text;
    std::size_t before = 0;
    for (std::size_t i = 0; i < n; ++i) {
      text += chunks[i].text;
      // Generated text usually starts with a space (" Once"): a sentencepiece tokenizer would
      // add its dummy-prefix space in front of it and count one token too many. Without that
      // one space both kinds of tokenizer count the same ("▁Once" / "Once").
      const std::string_view counted = !text.empty() && text[0] == ' ' ? std::string_view(text).substr(1) : std::string_view(text);
      const std::size_t now = tok->encode(counted, false).size();
      c.per_chunk[i] = std::max<int>(1, static_cast<int>(now) - static_cast<int>(before));
      before = now;
    }
    c.source = "local tokenizer";
  } else {
    c.source = "one per chunk";
  }
  for (int k : c.per_chunk) c.total += k;
  if (reader.usage() && reader.usage()->completion_tokens != c.total) {
    c.per_chunk = distribute_tokens(c.per_chunk, reader.usage()->completion_tokens);
    c.source += ", scaled to server usage";
  } else if (reader.usage()) {
    c.source += " (= server usage)";
  }
  if (reader.usage()) {
    c.total = reader.usage()->completion_tokens;
  }
  return c;
}

std::string trim_slash(std::string u) {
  while (!u.empty() && u.back() == '/') u.pop_back();
  return u;
}
}  // namespace

EndpointTarget::EndpointTarget(EndpointOptions opts) : opts_(std::move(opts)) {
  opts_.url = trim_slash(opts_.url);
  if (opts_.url.rfind("http://", 0) != 0 && opts_.url.rfind("https://", 0) != 0) {
    throw EndpointError("--endpoint: URL must start with http:// or https://, got '" + opts_.url + "'");
  }
  if (!opts_.api_key_env.empty()) {
    const char* key = std::getenv(opts_.api_key_env.c_str());
    if (!key || !*key) {
      throw EndpointError("--api-key-env: environment variable '" + opts_.api_key_env + "' is not set or empty");
    }
    api_key_ = key;
  }
  HttpClient client;
  HttpRequest r;
  r.url = opts_.url + "/models";
  r.headers = auth_headers();
  r.timeouts = opts_.timeouts;
  HttpResponse res = client.perform(r);
  if (!res.ok) throw EndpointError("--endpoint " + opts_.url + ": GET /models failed: " + res.error);
  models_ = json::parse(res.body, nullptr, false);
  if (models_.is_discarded() || !models_.is_object() || !models_.contains("data") || !models_["data"].is_array()) {
    throw EndpointError("--endpoint " + opts_.url + ": GET /models did not return {\"data\": [...]}: " +
                        res.body.substr(0, 200));
  }
  std::vector<std::string> ids;
  for (const auto& m : models_["data"]) {
    if (m.is_object() && m.contains("id") && m["id"].is_string()) ids.push_back(m["id"].get<std::string>());
  }
  if (ids.empty()) throw EndpointError("--endpoint " + opts_.url + ": GET /models lists no model");
  const json* entry = nullptr;
  if (opts_.served_model.empty()) {
    model_ = ids.front();
  } else {
    model_ = opts_.served_model;
    bool found = false;
    for (const auto& id : ids) found = found || id == model_;
    if (!found) {
      std::string list;
      for (const auto& id : ids) list += (list.empty() ? "" : ", ") + id;
      throw EndpointError("--served-model '" + model_ + "': not served by " + opts_.url + " (it lists: " + list + ")");
    }
  }
  for (const auto& m : models_["data"]) {
    // Compared as JSON: an entry whose id is not a string (a server's bug) is skipped, where
    // json::value() threw nlohmann's type_error out of the constructor.
    if (m.is_object() && m.contains("id") && m["id"] == model_) entry = &m;
  }
  kind_ = opts_.server_kind;
  if (kind_.empty()) {
    const std::string owner = entry && entry->contains("owned_by") && (*entry)["owned_by"].is_string()
                                  ? (*entry)["owned_by"].get<std::string>()
                                  : "";
    kind_ = owner == "vllm"                                 ? "vllm"
            : owner == "sglang"                             ? "sglang"
            : owner == "llamacpp"                           ? "llamacpp"
            : owner == "atlas-bench"                        ? "atlas-serve"
            : owner == "tensorrt_llm" || owner == "trtllm" ? "trtllm"
                                                            : "openai";
  }
  auto positive_int = [](const json* o, const char* key) -> int {
    if (!o || !o->is_object() || !o->contains(key) || !(*o)[key].is_number_integer()) return 0;
    return std::max(0, (*o)[key].get<int>());
  };
  context_length_ = opts_.context_length;
  if (context_length_ > 0) {
    context_source_ = "option";
  } else if ((context_length_ = positive_int(entry, "max_model_len")) > 0) {
    context_source_ = "max_model_len";
  } else if (entry && entry->contains("meta") && (context_length_ = positive_int(&(*entry)["meta"], "n_ctx")) > 0) {
    context_source_ = "meta.n_ctx";
  } else {
    // Older llama.cpp servers list only n_ctx_train (the model's, not the server's) in
    // /v1/models; the slot context is in /props.
    HttpRequest pr;
    pr.url = endpoint_root(opts_.url) + "/props";
    pr.headers = auth_headers();
    pr.timeouts = opts_.timeouts;
    const HttpResponse props = client.perform(pr);
    const json pj = props.ok ? json::parse(props.body, nullptr, false) : json();
    if (pj.is_object() && pj.contains("default_generation_settings") &&
        (context_length_ = positive_int(&pj["default_generation_settings"], "n_ctx")) > 0) {
      context_source_ = "props";
    }
  }
  std::random_device rd;
  salt_ = (static_cast<std::uint64_t>(rd()) << 32) ^ rd() ^ static_cast<std::uint64_t>(atlas::now_ns());
  if (salt_ == 0) salt_ = 1;
  give_back(std::make_unique<HttpClient>());
}

EndpointTarget::~EndpointTarget() = default;

std::vector<std::string> EndpointTarget::auth_headers() const {
  if (api_key_.empty()) return {};
  return {"Authorization: Bearer " + api_key_};
}

const engine::Tokenizer& EndpointTarget::tokenizer() const {
  if (!opts_.tokenizer) {
    throw EndpointError("endpoint target " + opts_.url +
                        ": no local tokenizer (pass --model with the served model's file to build prompts)");
  }
  return *opts_.tokenizer;
}

json EndpointTarget::provenance() const {
  std::lock_guard lock(mu_);
  return {{"transport", "http+sse"},
          {"url", opts_.url},
          {"served_model", model_},
          {"models", models_},
          {"api_key_env", opts_.api_key_env},
          {"context_length", context_length_},
          {"context_length_source", context_source_},
          {"server_kind", kind_},
          {"cold_salt", salt_},
          {"local_tokenizer", opts_.tokenizer != nullptr},
          {"timeouts_ms",
           {{"connect", opts_.timeouts.connect.count()},
            {"first_byte", opts_.timeouts.first_byte.count()},
            {"idle", opts_.timeouts.idle.count()},
            {"total", opts_.timeouts.total.count()}}},
          {"retries", opts_.retries},
          {"reset_prefix_cache", reset_outcome_},
          {"reset_prefix_cache_calls", reset_calls_},
          {"reset_prefix_cache_skipped", reset_skipped_},
          {"client_timestamps",
           {{"rule", "kernel receive time (SO_TIMESTAMPNS) of the newest waiting bytes, else the time they were read"},
            {"kernel_stamped_reads", kernel_stamped_reads_},
            {"user_stamped_reads", user_stamped_reads_}}}};
}

json EndpointTarget::request_body(const TargetRequest& req) const {
  json body = {{"model", model_},
               {"max_tokens", req.max_new_tokens},
               {"stream", true},
               {"stream_options", {{"include_usage", true}}},
               {"temperature", req.sampling.temperature},
               {"top_p", req.sampling.top_p},
               {"seed", req.sampling.seed}};
  if (req.sampling.top_k > 0) body["top_k"] = req.sampling.top_k;  // vLLM/atlas-serve extension
  if (req.ignore_eos) {
    body["ignore_eos"] = true;                // vLLM, SGLang, llama.cpp, TRT-LLM, atlas-serve
    body["min_tokens"] = req.max_new_tokens;  // vLLM, TRT-LLM: the length asked is the length measured
  }
  // llama.cpp skips its prompt cache for this request (the whole prompt is prefilled; the slot
  // keeps it afterwards, so a warm follow-up still reuses it): cold without a salt.
  if (req.cold && kind_ == "llamacpp") body["cache_prompt"] = false;
  // llama.cpp streams `"text": ""` for a token that may start a stop string and streams no
  // chunk for one that completes no UTF-8 character; its timings on every chunk (predicted_n,
  // cumulative) say how many tokens each chunk carried, so such tokens are counted and TTFT is
  // stamped at the first chunk that carries a token (openai_stream.hpp).
  if (kind_ == "llamacpp") body["timings_per_token"] = true;
  if (req.return_token_ids) {
    if (kind_ == "llamacpp") {
      // llama.cpp lists each generated token's id in logprobs.content[] (n_probs >= 1); its
      // chat route refuses logprobs with tools while streaming, so those go without ids.
      if (req.messages.is_null()) {
        body["logprobs"] = 1;
      } else if (req.tools.is_null()) {
        body["logprobs"] = true;
        body["top_logprobs"] = 1;
      }
    } else if (kind_ == "vllm" || kind_ == "atlas-serve") {
      body["return_token_ids"] = true;
    }
  }
  if (req.top_logprobs >= 0) {
    // llama.cpp lists ids only with at least one alternative (n_probs >= 1).
    const int n = req.return_token_ids && kind_ == "llamacpp" ? std::max(req.top_logprobs, 1) : req.top_logprobs;
    if (req.messages.is_null()) {
      body["logprobs"] = n;
    } else {
      body["logprobs"] = true;
      body["top_logprobs"] = n;
    }
  }
  if (!req.messages.is_null()) {
    body["messages"] = req.messages;
    if (!req.tools.is_null()) body["tools"] = req.tools;
  } else if (!req.prompt_ids.empty()) {
    // Token ids, also when the text is given: the exact prompt the suite built. Its text would
    // be re-tokenized by the server into a prompt of another length (stories260K: a 128-token
    // TTFT prompt comes back as 131), and the records would no longer compare.
    body["prompt"] = req.prompt_ids;
  } else {
    body["prompt"] = req.prompt_text;
  }
  return body;
}

std::unique_ptr<HttpClient> EndpointTarget::take_client() {
  std::lock_guard lock(mu_);
  if (idle_clients_.empty()) return std::make_unique<HttpClient>();
  auto c = std::move(idle_clients_.back());
  idle_clients_.pop_back();
  return c;
}

void EndpointTarget::give_back(std::unique_ptr<HttpClient> c) {
  std::lock_guard lock(mu_);
  idle_clients_.push_back(std::move(c));
}

std::uint64_t EndpointTarget::cold_salt() const {
  std::lock_guard lock(mu_);
  return last_reset_ok_ || kind_ == "llamacpp" ? 0 : salt_;
}

void EndpointTarget::reset_session() {
  {
    std::lock_guard lock(mu_);
    ++reset_calls_;
    if (reset_supported_ == 0) {
      ++reset_skipped_;
      last_reset_ok_ = false;
      return;
    }
  }
  auto client = take_client();
  HttpRequest r;
  r.method = "POST";
  r.url = endpoint_root(opts_.url) + "/reset_prefix_cache";
  r.headers = auth_headers();
  r.timeouts = opts_.timeouts;
  HttpResponse res = client->perform(r);
  give_back(std::move(client));
  std::lock_guard lock(mu_);
  last_reset_ok_ = res.ok;
  if (res.ok) {
    reset_supported_ = 1;
    reset_outcome_ = "ok";
  } else if (res.status == 404 || res.status == 405 || res.status == 501) {
    reset_supported_ = 0;
    reset_outcome_ = "unsupported (HTTP " + std::to_string(res.status) +
                     "): not asked again; cold requests rely on a unique prompt prefix and cached_tokens checks";
  } else {
    reset_outcome_ = "failed: " + res.error.substr(0, 200);
  }
}

TargetResponse EndpointTarget::generate(const TargetRequest& req) {
  if (!req.reuse_prefix) reset_session();
  auto client = take_client();
  TargetResponse out;
  for (int attempt_no = 0;; ++attempt_no) {
    out = attempt(req, *client);
    const bool retryable = !out.ok && (out.t_first_byte_ns == 0 || out.error.rfind("HTTP 429", 0) == 0 ||
                                       out.error.rfind("HTTP 503", 0) == 0);
    if (out.ok || !retryable || attempt_no >= opts_.retries) break;
  }
  give_back(std::move(client));
  return out;
}

TargetResponse EndpointTarget::attempt(const TargetRequest& req, HttpClient& client) {
  const bool chat = !req.messages.is_null();
  HttpRequest r;
  r.method = "POST";
  r.url = opts_.url + (chat ? "/chat/completions" : "/completions");
  r.body = request_body(req).dump();
  r.headers = auth_headers();
  r.headers.push_back("Accept: text/event-stream");
  r.timeouts = opts_.timeouts;

  SseParser parser;
  OpenAiStreamReader reader;
  std::vector<SseEvent> events;
  std::int64_t t_done_ns = 0;
  HttpResponse res = client.perform(r, [&](std::string_view bytes, std::int64_t t_ns, std::uint64_t wake) {
    events.clear();
    parser.feed(bytes, events);
    for (const auto& ev : events) {
      reader.on_event(ev, t_ns, wake);
      if (reader.done() && t_done_ns == 0) t_done_ns = t_ns;
    }
    if (parser.overflow()) {
      client.set_abort_reason("malformed SSE: a line longer than 16 MiB (not an event stream)");
      return false;
    }
    if (!reader.error().empty()) {
      client.set_abort_reason(reader.error());
      return false;
    }
    return true;
  });

  {
    std::lock_guard lock(mu_);
    kernel_stamped_reads_ += res.kernel_stamped_reads;
    user_stamped_reads_ += res.user_stamped_reads;
  }
  TargetResponse out;
  out.t_request_ns = res.t_sent_ns;
  out.http_status = static_cast<int>(res.status);
  out.t_first_byte_ns = res.t_first_byte_ns;
  out.t_end_ns = t_done_ns ? t_done_ns : res.t_end_ns;
  out.text = reader.text();
  out.tool_calls = reader.tool_calls();

  // A server that closes or stalls right after [DONE] delivered everything: the response stands.
  const bool complete = reader.done() && reader.error().empty();
  if (!res.ok && !(complete && res.status >= 200 && res.status < 300)) {
    out.ok = false;
    out.error = res.error;
  } else if (!reader.error().empty()) {
    out.ok = false;
    out.error = reader.error();
  } else if (!reader.done()) {
    out.ok = false;
    out.error = "stream ended without data: [DONE] after " + std::to_string(reader.events()) + " events (" +
                std::to_string(res.body_bytes) + " bytes, content-type '" + res.content_type + "')";
  }

  const auto& chunks = reader.chunks();
  const ChunkTokenCounts counts = chunk_token_counts(reader, opts_.tokenizer.get());
  std::vector<ChunkArrival> arrivals(chunks.size());
  for (std::size_t i = 0; i < chunks.size(); ++i) arrivals[i] = {chunks[i].t_ns, counts.per_chunk[i], chunks[i].wake};
  // Events that came in one socket read share its time: one arrival (stream_timing.hpp).
  out.token_t_ns = token_arrival_times(merge_same_read(arrivals));
  out.token_count_source = counts.source;
  out.finish_reason = reader.finish_reason();
  out.server_timings = reader.server_timings();
  if (reader.ids_complete()) out.output_ids = reader.token_ids();
  out.logprobs = reader.logprobs();

  if (reader.usage()) {
    out.prompt_tokens = reader.usage()->prompt_tokens;
    out.completion_tokens = reader.usage()->completion_tokens;
    out.cached_tokens = reader.usage()->cached_tokens;
  } else {
    out.completion_tokens = counts.total;
    if (!req.prompt_ids.empty() && req.messages.is_null()) {
      out.prompt_tokens = static_cast<int>(req.prompt_ids.size());
    } else if (opts_.tokenizer && !req.prompt_text.empty() && req.messages.is_null()) {
      out.prompt_tokens = static_cast<int>(opts_.tokenizer->encode(req.prompt_text, true).size());
    }
  }
  out.prefilled_tokens = out.prompt_tokens - out.cached_tokens;
  return out;
}

std::unique_ptr<Target> make_endpoint_target(const EndpointOptions& opts) {
  return std::make_unique<EndpointTarget>(opts);
}

}  // namespace atlas::suites::endpoint
