#include "suites/agentic/agentic_suite.hpp"

#include <chrono>
#include <limits>
#include <thread>

#include "common/clock.hpp"
#include "common/sha256.hpp"
#include "suites/cold_request.hpp"
#include "suites/error.hpp"
#include "suites/metric_util.hpp"
#include "suites/prompt_builder.hpp"
#include "suites/request_failures.hpp"
#include "suites/resources.hpp"

namespace atlas::suites {

using records::Better;
using records::MetricKind;

AgenticConfig AgenticConfig::from(const SuiteOptions& options) {
  ConfigSection s(options.config, options.config_source);
  s.allow_only({"warmup", "repetitions", "traces", "think_time_scale", "api"});
  AgenticConfig c;
  c.traces = s.get_string_list("traces", c.traces);
  c.think_time_scale = s.get_double("think_time_scale", c.think_time_scale, 0.0);
  const std::string api = s.get_string("api", "completions");
  if (api == "chat") {
    c.api = AgenticApi::chat;
  } else if (api != "completions") {
    throw SuiteError(s.source() + ": field 'api' must be \"completions\" or \"chat\", got \"" + api + "\"");
  }
  return c;
}

nlohmann::json AgenticConfig::to_json() const {
  return {{"traces", traces},
          {"think_time_scale", think_time_scale},
          {"api", api == AgenticApi::chat ? "chat" : "completions"}};
}

namespace {

std::uint64_t name_hash(const std::string& s) {
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a 64
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

std::string tool_signature(const nlohmann::json& tool) {
  const auto& f = tool["function"];
  std::string s = "- " + f.value("name", "") + "(";
  if (auto p = f.find("parameters"); p != f.end() && p->is_object() && p->contains("properties") &&
                                     (*p)["properties"].is_object()) {
    bool first = true;
    for (const auto& [arg, schema] : (*p)["properties"].items()) {
      s += (first ? "" : ", ") + arg;
      first = false;
    }
  }
  s += ")";
  if (auto d = f.find("description"); d != f.end() && d->is_string() && !d->get<std::string>().empty()) {
    s += ": " + d->get<std::string>();
  }
  return s + "\n";
}

void append(std::vector<int>& to, const std::vector<int>& from) { to.insert(to.end(), from.begin(), from.end()); }

}  // namespace

TraceRenderer::TraceRenderer(const engine::Tokenizer& tok, const AgenticTrace& trace, std::uint64_t seed)
    : tok_(&tok), trace_(&trace), seed_(mix_seed(seed, name_hash(trace.name))) {}

std::vector<int> TraceRenderer::preamble() const {
  std::vector<int> ids;
  if (auto bos = tok_->bos_id()) ids.push_back(*bos);
  std::string text;
  if (!trace_->system.empty()) text += "System: " + trace_->system + "\n";
  if (!trace_->tools.empty()) {
    text += "Tools:\n";
    for (const auto& tool : trace_->tools) text += tool_signature(tool);
  }
  if (!text.empty()) append(ids, tok_->encode(text, false));
  return ids;
}

std::string TraceRenderer::message_text(std::size_t index) const {
  const TraceMessage& m = trace_->messages.at(index);
  if (m.text) return *m.text;
  return decode_ids(*tok_, PromptBuilder(*tok_).filler(m.tokens.value_or(0), mix_seed(seed_, index)));
}

std::vector<int> TraceRenderer::message(std::size_t index) const {
  const TraceMessage& m = trace_->messages.at(index);
  if (m.role == TraceRole::assistant) throw SuiteError("TraceRenderer::message: turns[" + std::to_string(index) + "] is an assistant turn");
  const std::string header = m.role == TraceRole::user ? "\nUser:" : "\nTool (" + m.name + "):";
  std::vector<int> ids = tok_->encode(header, false);
  if (m.text) {
    append(ids, tok_->encode(*m.text, false));
  } else {
    append(ids, PromptBuilder(*tok_).filler(*m.tokens, mix_seed(seed_, index)));
  }
  return ids;
}

std::vector<int> TraceRenderer::assistant_header() const { return tok_->encode("\nAssistant:", false); }

int TraceRenderer::token_budget() const {
  std::size_t total = preamble().size();
  const std::size_t header = assistant_header().size();
  for (std::size_t i = 0; i < trace_->messages.size(); ++i) {
    const auto& m = trace_->messages[i];
    total += m.role == TraceRole::assistant ? header + static_cast<std::size_t>(m.max_tokens) : message(i).size();
  }
  return static_cast<int>(total);
}

AgenticSessionResult run_agentic_session(Target& target, const AgenticTrace& trace, std::uint64_t seed,
                                         double think_time_scale, AgenticApi api, std::uint64_t session_nonce) {
  const TraceRenderer render(target.tokenizer(), trace, seed);
  AgenticSessionResult out;
  target.reset_session();
  std::vector<int> history = render.preamble();
  const std::uint64_t salt = target.cold_salt();
  // Turn 1 must be cold on any server (a reset the server does not have cannot be relied on):
  // a salted target gets a unique prefix per session, right after BOS (ids) or at the head of
  // the system message (chat). In process the reset is real and the prompts stay as rendered.
  // The salt as ttft and bfcl put it (suites/cold_request.hpp), one per session.
  std::string salt_text;
  if (salt != 0) {
    const ColdRequests cold(target);
    const std::uint64_t session_salt = mix_seed(salt, session_nonce) | 1;
    history = cold.salted_ids(history, session_salt, std::numeric_limits<std::size_t>::max());
    salt_text = cold.salt_text(session_salt);
  }
  nlohmann::json messages = nlohmann::json::array();
  if (!trace.system.empty() || !salt_text.empty()) {
    messages.push_back({{"role", "system"}, {"content", salt_text + trace.system}});
  }
  int expected = 0;
  bool expected_exact = true;  // the next prompt extends the previous prompt + output exactly
  std::int64_t t0 = 0;
  for (std::size_t i = 0; i < trace.messages.size(); ++i) {
    const TraceMessage& m = trace.messages[i];
    if (m.think_ms > 0 && think_time_scale > 0 && t0 != 0) {
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(m.think_ms * think_time_scale));
    }
    if (m.role != TraceRole::assistant) {
      append(history, render.message(i));
      // Chat endpoints get tool results as user messages: an OpenAI "tool" message must answer
      // a tool_call id, which a scripted trace cannot know.
      const std::string content = m.role == TraceRole::tool ? "Tool (" + m.name + "): " + render.message_text(i)
                                                            : render.message_text(i);
      messages.push_back({{"role", "user"}, {"content", content}});
      continue;
    }
    TargetRequest req;
    req.prompt_ids = history;
    append(req.prompt_ids, render.assistant_header());
    req.prompt_text = decode_ids(target.tokenizer(), req.prompt_ids);
    if (api == AgenticApi::chat) {
      req.messages = messages;
      if (!trace.tools.empty()) req.tools = trace.tools;
    }
    req.max_new_tokens = m.max_tokens;
    req.ignore_eos = true;
    req.reuse_prefix = true;
    req.return_token_ids = api == AgenticApi::completions;
    req.cold = out.turns.empty();  // turn 1: no cache may serve it (the session's salt or the server's bypass)
    AgenticTurnResult tr;
    tr.turn = static_cast<int>(out.turns.size()) + 1;
    const std::string what = "agentic " + trace.name + " turn " + std::to_string(tr.turn);
    const TargetResponse resp = target.generate(req);
    if (!resp.ok) {
      out.failed = resp.error;
      return out;
    }
    if (t0 == 0) t0 = resp.t_request_ns;
    // Prompt accounting is the target's own (usage.prompt_tokens / cached_tokens): in chat mode
    // the server's template decides the prompt, and a local count would mix two renderings.
    tr.prompt_tokens = resp.prompt_tokens > 0 ? resp.prompt_tokens : static_cast<int>(req.prompt_ids.size());
    tr.reused = resp.cached_tokens;
    tr.prefilled = tr.prompt_tokens - tr.reused;
    if (tr.reused < 0 || tr.reused > tr.prompt_tokens) {
      throw SuiteError(what + ": the target reported cached_tokens = " + std::to_string(tr.reused) +
                       " for a prompt of " + std::to_string(tr.prompt_tokens) + " tokens (" + target.name() + ")");
    }
    tr.expected_reused = expected;
    tr.expected_exact = tr.turn == 1 || expected_exact;
    tr.latency = compute_latency(resp);
    tr.server_timings = resp.server_timings;
    // The next prompt extends this output exactly only with the target's own ids. Re-encoding
    // the text (a server that lists no ids) can differ by a token (a leading space), so the
    // expected reuse of the next turn is then not exact and no shortfall is charged for it.
    std::vector<int> generated = resp.output_ids;
    expected_exact = api == AgenticApi::completions;
    if (generated.empty() && !resp.text.empty()) {
      generated = target.tokenizer().encode(resp.text, false);
      expected_exact = false;
      tr.ids_source = "local re-encoding";
    }
    tr.output_tokens = resp.completion_tokens > 0 ? resp.completion_tokens : static_cast<int>(generated.size());
    if (expected_exact && static_cast<int>(generated.size()) != tr.output_tokens) expected_exact = false;
    // Turn 1 is a cold request in both modes and on every target (salted or not): the same
    // allowance as ColdRequests (a shared BOS; a salted chat prompt also the server template's
    // head before the salt).
    if (tr.turn == 1 && tr.reused > ColdRequests::allowed_cached(target.tokenizer(), salt != 0, api == AgenticApi::chat)) {
      throw SuiteError(what + ": turn 1 is cold (reset, a unique prefix or the server's cache bypass) but the target reported cached_tokens = " +
                       std::to_string(tr.reused) + " (" + target.name() + "): it is not cold");
    }
    out.output_ids.insert(out.output_ids.end(), generated.begin(), generated.end());
    history = req.prompt_ids;
    append(history, generated);
    expected = tr.prompt_tokens + std::max(0, tr.output_tokens - 1);
    messages.push_back({{"role", "assistant"}, {"content", resp.text}});
    out.wall_ms = static_cast<double>(resp.token_t_ns.back() - t0) / 1e6;
    out.turns.push_back(std::move(tr));
  }
  return out;
}

records::SuiteResult run_agentic_suite(Target& target, const SuiteOptions& options) {
  const AgenticConfig cfg = AgenticConfig::from(options);
  records::SuiteResult r = repeated_suite_result("agentic", cfg.to_json(), options);

  std::vector<AgenticTrace> traces;
  nlohmann::json skipped = nlohmann::json::array();
  // The traces' contents are part of what the counts were measured with: a BASELINE pins this
  // config (gates/identity.hpp), and a trace edited under the same name changes every count.
  nlohmann::json trace_sha = nlohmann::json::object();
  for (const auto& name : cfg.traces) {
    const auto path = resolve_resource(name, "traces");
    AgenticTrace t = load_trace(path);  // first: its error names a missing or malformed trace
    trace_sha[name] = sha256_file_hex(path);
    const int budget = TraceRenderer(target.tokenizer(), t, options.seed).token_budget();
    if (budget > target.context_length()) {
      skipped.push_back({{"trace", t.name}, {"needs_tokens", budget}, {"context_length", target.context_length()}});
      continue;
    }
    traces.push_back(std::move(t));
  }
  r.config["trace_sha256"] = trace_sha;
  r.details["skipped"] = skipped;
  std::string skip_note;  // said, not only recorded (see the ttft suite)
  for (const auto& s : skipped) {
    skip_note += std::string(skip_note.empty() ? "skipped trace " : "; trace ") + s["trace"].get<std::string>() + " (needs " +
                 std::to_string(s["needs_tokens"].get<int>()) + " tokens";
    skip_note += ", the target's context is " + std::to_string(s["context_length"].get<int>()) + ")";
  }
  if (!skip_note.empty()) r.details["notes"].push_back(skip_note);
  if (traces.empty()) throw SuiteError("agentic: no configured trace fits the target's context of " +
                                       std::to_string(target.context_length()) + " tokens");

  int steps = 0;
  for (const auto& t : traces) steps += t.assistant_turns();
  Progress& progress = options.progress_or_null();
  progress.begin("agentic", steps * (options.warmup + options.repetitions));

  nlohmann::json shortfalls = nlohmann::json::array();
  std::uint64_t session_nonce = 0;
  int inexact_turns = 0;
  nlohmann::json trace_details = nlohmann::json::object();
  std::vector<double> total_shortfall(static_cast<std::size_t>(options.repetitions), 0.0);
  // Repetitions whose every session completed: only those have a total shortfall to report.
  std::vector<bool> rep_complete(static_cast<std::size_t>(options.repetitions), true);
  // A failed turn ends its session (the next turns extend its output) and the suite goes on
  // with the next session, stopping after 3 failed requests in a row: the turns measured stay
  // in the record, which is then invalid (suites/request_failures.hpp).
  RequestFailures failures(steps * (options.warmup + options.repetitions));
  for (const auto& trace : traces) {
    const std::string p = trace.name + "/";
    nlohmann::json turns_detail = nlohmann::json::array();
    for (int rep = 0; rep < options.warmup + options.repetitions; ++rep) {
      const bool measured = rep >= options.warmup;
      if (failures.should_stop()) {
        if (measured) rep_complete[static_cast<std::size_t>(rep - options.warmup)] = false;
        continue;
      }
      const AgenticSessionResult s =
          run_agentic_session(target, trace, options.seed, cfg.think_time_scale, cfg.api, ++session_nonce);
      const std::string rep_label = (measured ? " rep " : " warmup ") + std::to_string(measured ? rep - options.warmup + 1 : rep + 1);
      for (const auto& t : s.turns) {
        failures.completed();
        progress.step(trace.name + " turn " + std::to_string(t.turn) + rep_label);
      }
      if (!s.failed.empty()) {
        const std::string what = "agentic " + trace.name + " turn " + std::to_string(s.turns.size() + 1) + rep_label;
        failures.failed(what, s.failed);
        progress.step(what + " FAILED");
        if (measured) rep_complete[static_cast<std::size_t>(rep - options.warmup)] = false;
      }
      if (!measured) continue;
      const int mrep = rep - options.warmup;
      double shortfall = 0;
      for (const auto& t : s.turns) {
        const std::string k = "turn=" + std::to_string(t.turn);
        metric(r, p + "ttft_ms/" + k, "ms", Better::lower, MetricKind::timed, "TTFT of this assistant turn")
            .samples.push_back(t.latency.ttft_ms);
        metric(r, p + "ttft_ms", "ms", Better::lower, MetricKind::timed, "TTFT of every assistant turn")
            .samples.push_back(t.latency.ttft_ms);
        metric(r, p + "reused_tokens/" + k, "tokens", Better::higher, MetricKind::counted,
               "prompt tokens the target reused from its cached prefix")
            .samples.push_back(t.reused);
        metric(r, p + "prefilled_tokens/" + k, "tokens", Better::lower, MetricKind::counted,
               "prompt tokens the target ran through prefill")
            .samples.push_back(t.prefilled);
        if (t.latency.decode_tok_s) {
          metric(r, p + "decode_tok_s", "tok/s", Better::higher, MetricKind::timed, "decode throughput per turn")
              .samples.push_back(*t.latency.decode_tok_s);
        }
        // Only an exact expectation can be missed: see AgenticTurnResult::expected_exact.
        if (!t.expected_exact) ++inexact_turns;
        const int missing = t.expected_exact ? std::max(0, t.expected_reused - t.reused) : 0;
        shortfall += missing;
        if (missing > 0) {
          shortfalls.push_back({{"trace", trace.name}, {"repetition", mrep + 1}, {"turn", t.turn},
                                {"expected_reused", t.expected_reused}, {"reused", t.reused},
                                {"prompt_tokens", t.prompt_tokens}});
        }
        if (mrep == 0) {
          turns_detail.push_back({{"turn", t.turn}, {"prompt_tokens", t.prompt_tokens},
                                  {"expected_reused", t.expected_reused}, {"reused", t.reused},
                                  {"prefilled", t.prefilled}, {"output_tokens", t.output_tokens},
                                  {"expected_exact", t.expected_exact}, {"ids_source", t.ids_source},
                                  {"server_timings", t.server_timings}});
        }
      }
      if (!s.failed.empty()) continue;  // the turns before the failure are kept; the session's totals are not a session's
      metric(r, p + "session_wall_ms", "ms", Better::lower, MetricKind::timed,
             "session wall time: first request start to last token, think time included")
          .samples.push_back(s.wall_ms);
      metric(r, p + "reuse_shortfall_tokens", "tokens", Better::lower, MetricKind::counted,
             "sum over turns of expected reused - reused prefix tokens, when positive")
          .samples.push_back(shortfall);
      total_shortfall[static_cast<std::size_t>(mrep)] += shortfall;
    }
    trace_details[trace.name] = {{"source", trace.source}, {"description", trace.description}, {"turns", turns_detail}};
  }
  std::vector<double> complete_shortfall;
  for (std::size_t i = 0; i < total_shortfall.size(); ++i) {
    if (rep_complete[i]) complete_shortfall.push_back(total_shortfall[i]);
  }
  metric(r, "reuse_shortfall_tokens", "tokens", Better::lower, MetricKind::counted,
         "prefix tokens the target failed to reuse, summed over all traces and turns")
      .samples = complete_shortfall;
  failures.add_details(r.details, target.name());
  r.details["traces"] = trace_details;
  r.details["reuse_shortfalls"] = shortfalls;
  r.details["turns_without_exact_expectation"] = inexact_turns;
  progress.end(std::to_string(traces.size()) + " traces, " +
               (shortfalls.empty() ? std::string("prefix reuse as expected")
                                   : std::to_string(shortfalls.size()) + " turns reused less than expected") +
               (skip_note.empty() ? "" : "; " + skip_note) +
               (failures.failures() ? " (INVALID: " + r.details["invalid_reason"].get<std::string>() + ")" : ""));
  return r;
}

}  // namespace atlas::suites
