#include "server/completion.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <random>

#include "engine/error.hpp"
#include "server/api_error.hpp"
#include "server/error.hpp"
#include "server/logprobs_json.hpp"
#include "server/tool_calls.hpp"

namespace atlas::server {

using nlohmann::json;

StopScan scan_stop_strings(std::string_view text, const std::vector<std::string>& stops) {
  StopScan s;
  std::size_t first = std::string_view::npos;
  for (const auto& st : stops) first = std::min(first, text.find(st));
  if (first != std::string_view::npos) return {first, true};
  std::size_t hold = 0;
  for (const auto& st : stops) {
    for (std::size_t n = std::min(text.size(), st.size() - 1); n > hold; --n) {
      if (text.substr(text.size() - n) == std::string_view(st).substr(0, n)) {
        hold = n;
        break;
      }
    }
  }
  s.cut = text.size() - hold;
  return s;
}

namespace {
/// The most bytes one token stands for (token_bytes after no token, over the vocabulary).
std::size_t longest_token_bytes(const engine::Tokenizer& tok) {
  std::size_t m = 0;
  for (int id = 0; id < tok.vocab_size(); ++id) m = std::max(m, tok.token_bytes(-1, id).size());
  return m;
}
}  // namespace

CompletionRunner::CompletionRunner(Generator& gen, chat::ChatTemplate chat_template, std::string served_name)
    : gen_(gen),
      template_(std::move(chat_template)),
      served_name_(std::move(served_name)),
      max_token_bytes_(longest_token_bytes(gen_.tokenizer())) {}

std::vector<int> CompletionRunner::encode_prompt(const std::string& text, const char* param) const {
  const engine::Tokenizer& tok = gen_.tokenizer();
  const int ctx = gen_.context_length();
  // A completion needs one free position: the prompt may have at most ctx - 1 tokens. No
  // token stands for more than max_token_bytes_ bytes, so a longer text cannot fit (+1:
  // SentencePiece's dummy space prefix; BOS stands for no bytes). Judged before tokenising:
  // a 10 MB prompt took 9-10 s of tokenising before its 400.
  const std::size_t max_ids = ctx > 1 ? static_cast<std::size_t>(ctx - 1) : 0;
  const std::size_t text_ids = max_ids - (tok.bos_id() && max_ids > 0 ? 1 : 0);
  if (max_token_bytes_ > 0 && text.size() > max_token_bytes_ * text_ids + 1) {
    throw bad_request("This model's maximum context length is " + std::to_string(ctx) + " tokens; the prompt has " +
                          std::to_string(text.size()) + " bytes, and no token of this model stands for more than " +
                          std::to_string(max_token_bytes_) + " bytes, so it has more than " + std::to_string(max_ids) +
                          " tokens, leaving no room for a completion",
                      param, "context_length_exceeded");
  }
  // Within the byte bound a text can still hold many more tokens than fit (the bound assumes
  // every token is the longest): the tokenizer stops once the count passes max_ids.
  std::optional<std::vector<int>> ids = tok.encode_at_most(text, true, max_ids);
  if (!ids) {
    throw bad_request("This model's maximum context length is " + std::to_string(ctx) + " tokens; the prompt has more than " +
                          std::to_string(max_ids) + " tokens, leaving no room for a completion",
                      param, "context_length_exceeded");
  }
  return std::move(*ids);
}

std::string CompletionRunner::render_chat(const CompletionRequest& req) const {
  chat::TemplateValue ctx = chat::TemplateValue::object();
  ctx["messages"] = req.messages;
  if (!req.tools.is_null() && !req.tool_choice_none) ctx["tools"] = req.tools;
  ctx["add_generation_prompt"] = req.add_generation_prompt;
  // BOS is added by the tokenizer (encode(add_bos=true)); templates that print bos_token would
  // otherwise add it twice.
  ctx["bos_token"] = "";
  ctx["eos_token"] = "";
  return template_.render(ctx);
}

PreparedRequest CompletionRunner::prepare(CompletionRequest req) {
  if (req.model != served_name_) {
    throw ApiError{400, "invalid_request_error",
                   "The model '" + req.model + "' does not exist; this server serves '" + served_name_ + "'", "model",
                   "model_not_found"};
  }
  const engine::Tokenizer& tok = gen_.tokenizer();
  PreparedRequest p;
  if (req.chat) {
    std::string text;
    try {
      text = render_chat(req);
    } catch (const chat::TemplateError& e) {
      throw bad_request(e.what(), "messages", "chat_template_error");
    }
    p.prompt_ids = encode_prompt(text, "messages");
    p.parse_tools = !req.tools.is_null() && !req.tool_choice_none;
  } else if (req.prompt_is_ids) {
    for (std::size_t i = 0; i < req.prompt_ids.size(); ++i) {
      if (req.prompt_ids[i] >= tok.vocab_size()) {
        throw bad_request("prompt token " + std::to_string(i) + " is " + std::to_string(req.prompt_ids[i]) +
                              ", outside the vocabulary [0, " + std::to_string(tok.vocab_size()) + ")",
                          "prompt", "invalid_token");
      }
    }
    p.prompt_ids = req.prompt_ids;
  } else {
    p.prompt_ids = encode_prompt(req.prompt_text, "prompt");
  }
  const char* param = req.chat ? "messages" : "prompt";
  if (p.prompt_ids.empty()) throw bad_request("the prompt is empty (no tokens)", param, "empty_prompt");
  const int ctx = gen_.context_length();
  const int n = static_cast<int>(p.prompt_ids.size());
  if (n >= ctx) {
    throw bad_request("This model's maximum context length is " + std::to_string(ctx) + " tokens; the prompt has " +
                          std::to_string(n) + " tokens, leaving no room for a completion",
                      param, "context_length_exceeded");
  }
  if (req.max_tokens) {
    if (n + *req.max_tokens > ctx) {
      throw bad_request("This model's maximum context length is " + std::to_string(ctx) + " tokens; the prompt (" +
                            std::to_string(n) + ") plus max_tokens (" + std::to_string(*req.max_tokens) + ") exceeds it",
                        "max_tokens", "context_length_exceeded");
    }
    p.max_new_tokens = *req.max_tokens;
  } else {
    p.max_new_tokens = ctx - n;
  }
  if (req.min_tokens > p.max_new_tokens) {  // max_tokens given: the parser refused this already
    throw bad_request("'min_tokens' (" + std::to_string(req.min_tokens) + ") exceeds the " + std::to_string(p.max_new_tokens) +
                          " tokens the context leaves after the prompt (" + std::to_string(n) + " of " + std::to_string(ctx) + ")",
                      "min_tokens", "context_length_exceeded");
  }
  if (req.logprobs && !gen_.supports_logprobs()) {
    throw bad_request("'logprobs' is not supported by the " + gen_.backend_name() + " backend this server decodes with", "logprobs",
                      "unsupported_value");
  }
  const std::uint64_t k = counter_.fetch_add(1);
  p.id = (req.chat ? "chatcmpl-" : "cmpl-") + std::to_string(k);
  p.created = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  if (!req.seed_given && !req.sampling.greedy()) req.sampling.seed = std::random_device{}();
  p.req = std::move(req);
  return p;
}

namespace {
struct ClientGone {};
struct StopHit {};

std::size_t common_prefix(const std::vector<int>& a, const std::vector<int>& b) {
  std::size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  return i;
}
}  // namespace

json CompletionRunner::run(const PreparedRequest& p, const std::function<bool(const json&)>& emit,
                          const std::function<bool()>& client_gone) {
  const CompletionRequest& r = p.req;
  const engine::Tokenizer& tok = gen_.tokenizer();
  const bool stream = r.stream;

  json base = {{"id", p.id},
               {"object", r.chat ? (stream ? "chat.completion.chunk" : "chat.completion") : "text_completion"},
               {"created", p.created},
               {"model", served_name_}};
  std::vector<int> unsent_ids;  // generated ids not yet listed on a chunk (return_token_ids)
  std::vector<int> all_ids;
  // Log-probabilities not yet sent, listed on the next chunk as token ids are (text held back
  // for a stop string or a tool call is sent later; its tokens' logprobs go with it).
  LogprobsJson logprobs(tok, r.chat, r.return_tokens_as_token_ids);
  auto chunk = [&](json choice) {
    json c = base;
    choice["index"] = 0;
    choice["logprobs"] = r.logprobs ? logprobs.take() : json(nullptr);
    if (r.return_token_ids) {
      choice["token_ids"] = unsent_ids;
      unsent_ids.clear();
    }
    if (!choice.contains("finish_reason")) choice["finish_reason"] = nullptr;
    c["choices"] = json::array({std::move(choice)});
    return c;
  };
  auto send = [&](const json& c) {
    if (!emit(c)) throw ClientGone{};
  };

  std::string content;                 // everything emitted as content
  std::vector<ToolCall> calls;
  ToolCallStream tools;
  const std::string call_prefix = "call_" + p.id.substr(p.id.find('-') + 1) + "_";
  auto emit_text = [&](const std::string& t) {
    if (t.empty()) return;
    std::string piece = t;
    std::vector<ToolCall> new_calls;
    if (p.parse_tools) {
      auto d = tools.push(t);
      piece = std::move(d.content);
      new_calls = std::move(d.calls);
    }
    content += piece;
    if (stream && !piece.empty()) {
      send(r.chat ? chunk({{"delta", {{"content", piece}}}}) : chunk({{"text", piece}}));
    }
    for (auto& c : new_calls) {
      if (stream) {
        json tc = tool_calls_json({c}, call_prefix, static_cast<int>(calls.size()));
        tc[0]["index"] = calls.size();
        send(chunk({{"delta", {{"tool_calls", tc}}}}));
      }
      calls.push_back(std::move(c));
    }
  };

  std::string pending;  // text held back while it may begin a stop string
  bool stop_string_hit = false;
  int generated = 0;
  auto push_text = [&](const std::string& t) {
    // Stop strings are looked for in the text of the tokens after the first min_tokens (vLLM
    // checks none before): that text goes out as it comes, nothing held back.
    if (r.stop.empty() || generated <= r.min_tokens) {
      emit_text(t);
      return;
    }
    pending += t;
    const StopScan s = scan_stop_strings(pending, r.stop);
    emit_text(pending.substr(0, s.cut));
    pending.erase(0, s.cut);
    if (s.stopped) {
      pending.clear();
      stop_string_hit = true;
      throw StopHit{};
    }
  };

  if (stream && r.chat) send(chunk({{"delta", {{"role", "assistant"}, {"content", ""}}}}));

  engine::GenerateRequest g;
  g.prompt_ids = p.prompt_ids;
  g.max_new_tokens = p.max_new_tokens;
  g.sampling = r.sampling;
  if (!r.ignore_eos) g.stop_ids = tok.stop_ids();
  g.min_new_tokens = r.min_tokens;
  g.reuse_prefix = true;
  g.logprobs = r.logprobs;
  g.top_logprobs = r.top_logprobs;
  // A client that left during a long prefill stops it at the next chunk boundary (the CPU
  // backend: every 256 tokens, at least milliseconds apart, so each boundary asks).
  if (client_gone) g.cancelled = client_gone;

  engine::StreamDecoder dec(tok, p.prompt_ids.back());
  int prev_id = p.prompt_ids.back();
  const int cached_estimate = static_cast<int>(std::min(common_prefix(gen_.cached_tokens(), p.prompt_ids),
                                                        p.prompt_ids.size() - 1));
  engine::GenerateResult result;
  bool completed = false;
  // The client check is a poll() and a peek (two system calls); at most every 5 ms it costs
  // nothing measurable next to a decoded token, and a client that left frees the slot in 5 ms
  // plus one token.
  auto next_check = std::chrono::steady_clock::now();
  try {
    result = gen_.generate(g, [&](const engine::TokenEvent& ev) {
      if (client_gone) {
        if (const auto now = std::chrono::steady_clock::now(); now >= next_check) {
          if (client_gone()) throw ClientGone{};
          next_check = now + std::chrono::milliseconds(5);
        }
      }
      ++generated;
      if (r.return_token_ids) {
        unsent_ids.push_back(ev.id);
        all_ids.push_back(ev.id);
      }
      if (ev.logprobs) logprobs.add(prev_id, *ev.logprobs);
      prev_id = ev.id;
      push_text(dec.push(ev.id));
    });
    completed = true;
  } catch (const ClientGone&) {
    return json::object();  // the session's cached prefix stays valid (generator.hpp)
  } catch (const engine::GenerationCancelled&) {
    return json::object();  // g.cancelled during the prefill: as a client gone
  } catch (const StopHit&) {
  } catch (const engine::UnsupportedFeatureError& e) {
    // prepare() refuses what the generator says it lacks; this is a generator that said yes.
    throw ApiError{400, "invalid_request_error", e.what(), e.feature(), "unsupported_value"};
  } catch (const engine::EngineError& e) {
    gen_.reset();
    throw ApiError{500, "server_error", std::string("engine error: ") + e.what(), "", "engine_error"};
  } catch (const std::exception& e) {
    gen_.reset();
    throw ApiError{500, "server_error", std::string("internal error: ") + e.what(), "", "internal_error"};
  }

  try {
    if (completed) {
      push_text(dec.flush());
      if (!pending.empty()) {
        emit_text(pending);
        pending.clear();
      }
    }
    if (p.parse_tools) {
      auto d = tools.finish();
      content += d.content;
      if (stream && !d.content.empty()) send(chunk({{"delta", {{"content", d.content}}}}));
      for (auto& c : d.calls) {
        if (stream) {
          json tc = tool_calls_json({c}, call_prefix, static_cast<int>(calls.size()));
          tc[0]["index"] = calls.size();
          send(chunk({{"delta", {{"tool_calls", tc}}}}));
        }
        calls.push_back(std::move(c));
      }
    }
  } catch (const StopHit&) {
  } catch (const ClientGone&) {
    return json::object();
  }

  std::string finish = "length";
  if (stop_string_hit || (completed && result.stop == engine::StopReason::stop_token)) finish = "stop";
  if (!calls.empty()) finish = "tool_calls";
  const int cached = completed ? result.prefix_reused : cached_estimate;
  const int prompt_tokens = static_cast<int>(p.prompt_ids.size());
  const int completion_tokens = completed ? static_cast<int>(result.output_ids.size()) : generated;
  json usage = {{"prompt_tokens", prompt_tokens},
                {"completion_tokens", completion_tokens},
                {"total_tokens", prompt_tokens + completion_tokens},
                {"prompt_tokens_details", {{"cached_tokens", cached}}}};

  if (stream) {
    try {
      send(r.chat ? chunk({{"delta", json::object()}, {"finish_reason", finish}}) : chunk({{"text", ""}, {"finish_reason", finish}}));
      if (r.include_usage) {
        json u = base;
        u["choices"] = json::array();
        u["usage"] = usage;
        send(u);
      }
    } catch (const ClientGone&) {
    }
    return usage;
  }
  json resp = base;
  if (r.chat) {
    json msg = {{"role", "assistant"}, {"content", content.empty() && !calls.empty() ? json(nullptr) : json(content)}};
    if (!calls.empty()) msg["tool_calls"] = tool_calls_json(calls, call_prefix);
    resp["choices"] = json::array({{{"index", 0}, {"message", msg}, {"logprobs", nullptr}, {"finish_reason", finish}}});
  } else {
    resp["choices"] = json::array({{{"index", 0}, {"text", content}, {"logprobs", nullptr}, {"finish_reason", finish}}});
  }
  if (r.logprobs) {
    resp["choices"][0]["logprobs"] = logprobs.take();
    if (resp["choices"][0]["logprobs"].is_null()) {  // no tokens: still the shape asked for
      resp["choices"][0]["logprobs"] = r.chat ? json{{"content", json::array()}, {"refusal", nullptr}}
                                              : json{{"tokens", json::array()}, {"token_logprobs", json::array()},
                                                     {"top_logprobs", json::array()}, {"text_offset", json::array()}};
    }
  }
  if (r.return_token_ids) resp["choices"][0]["token_ids"] = all_ids;
  resp["usage"] = usage;
  return resp;
}

}  // namespace atlas::server
