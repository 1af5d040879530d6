#include "suites/bfcl/bfcl_suite.hpp"

#include "common/data_dir.hpp"
#include "common/sha256.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <limits>
#include <map>
#include <cstdlib>
#include <set>

#include "suites/bfcl/bfcl_error.hpp"
#include "suites/cold_request.hpp"
#include "suites/latency.hpp"
#include "suites/bfcl/prompt.hpp"
#include "suites/bfcl/score.hpp"
#include "suites/resources.hpp"

namespace atlas::suites::bfcl {

namespace {

[[noreturn]] void bad(const std::string& where, const std::string& what) { throw BfclError(where + ": " + what); }

// Natural order for ids: "simple_python_9" < "simple_python_10", "live_simple_2-1-0" < "live_simple_10-...".
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      std::size_t ei = i, ej = j;
      while (ei < a.size() && std::isdigit(static_cast<unsigned char>(a[ei]))) ++ei;
      while (ej < b.size() && std::isdigit(static_cast<unsigned char>(b[ej]))) ++ej;
      const std::string na = a.substr(i, ei - i), nb = b.substr(j, ej - j);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ei;
      j = ej;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

records::Metric metric(std::string unit, records::Better better, records::MetricKind kind, std::string description) {
  records::Metric m;
  m.unit = std::move(unit);
  m.better = better;
  m.kind = kind;
  m.description = std::move(description);
  return m;
}

// TargetResponse.tool_calls -> what an FC handler stores: [{name: "<arguments JSON>"}]. Accepts
// OpenAI tool calls ({"function": {"name", "arguments"}}) and bare {"name", "arguments"}.
nlohmann::ordered_json fc_result(const TargetResponse& resp) {
  if (!resp.tool_calls.is_array() || resp.tool_calls.empty()) return resp.text;
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& call : resp.tool_calls) {
    const nlohmann::json* fn = &call;
    if (call.is_object() && call.contains("function") && call["function"].is_object()) fn = &call["function"];
    if (fn->is_object() && fn->contains("name") && (*fn)["name"].is_string()) {
      const auto& args = fn->contains("arguments") ? (*fn)["arguments"] : nlohmann::json::object();
      out.push_back(nlohmann::ordered_json{{(*fn)["name"].get<std::string>(), args.is_string() ? args.get<std::string>() : args.dump()}});
    } else {
      out.push_back(nlohmann::ordered_json::parse(call.dump()));
    }
  }
  return out;
}

std::string clip(const std::string& s, std::size_t n) { return s.size() <= n ? s : s.substr(0, n) + "..."; }

/// An HTTP 400 that names the context (llama.cpp "exceeds the available context size", vLLM
/// "maximum context length", atlas-serve "context_length_exceeded").
bool context_rejection(const std::string& error) {
  if (error.rfind("HTTP 400", 0) != 0) return false;
  std::string lower = error;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower.find("context") != std::string::npos;
}

}  // namespace

BfclSuiteConfig bfcl_config_from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) bad(where, "a BFCL suite config must be a JSON object");
  static const std::set<std::string> known = {"name", "categories", "per_category", "max_new_tokens", "mode",
                                              "underscore_to_dot", "overflow", "max_entry_details"};
  BfclSuiteConfig c;
  for (const auto& [k, v] : j.items()) {
    if (!known.count(k)) bad(where, "unknown field '" + k + "'");
  }
  auto int_field = [&](const char* key, int& out, int min) {
    if (!j.contains(key)) return;
    if (!j[key].is_number_integer() || j[key].get<long long>() < min) {
      bad(where, std::string("field '") + key + "' must be an integer >= " + std::to_string(min) + ", got " + j[key].dump());
    }
    out = j[key].get<int>();
  };
  if (j.contains("name")) {
    if (!j["name"].is_string()) bad(where, "field 'name' must be a string, got " + j["name"].dump());
    c.name = j["name"].get<std::string>();
  }
  if (j.contains("categories")) {
    if (!j["categories"].is_array()) bad(where, "field 'categories' must be a list, got " + j["categories"].dump());
    for (const auto& cat : j["categories"]) {
      const auto& all = all_categories();
      if (!cat.is_string() || std::find(all.begin(), all.end(), cat.get<std::string>()) == all.end()) {
        bad(where, "field 'categories': unknown category " + cat.dump());
      }
      c.categories.push_back(cat.get<std::string>());
    }
  }
  int_field("per_category", c.per_category, 0);
  int_field("max_new_tokens", c.max_new_tokens, 1);
  int_field("max_entry_details", c.max_entry_details, 0);
  if (j.contains("mode")) {
    const auto& m = j["mode"];
    if (m == "prompt") c.mode = BfclMode::prompt;
    else if (m == "native_fc") c.mode = BfclMode::native_fc;
    else bad(where, "field 'mode' must be \"prompt\" or \"native_fc\", got " + m.dump());
  }
  if (j.contains("underscore_to_dot")) {
    if (!j["underscore_to_dot"].is_boolean()) bad(where, "field 'underscore_to_dot' must be a boolean");
    c.underscore_to_dot = j["underscore_to_dot"].get<bool>();
  }
  if (j.contains("overflow")) {
    const auto& o = j["overflow"];
    if (o == "truncate") c.truncate_overflow = true;
    else if (o == "skip") c.truncate_overflow = false;
    else bad(where, "field 'overflow' must be \"truncate\" or \"skip\", got " + o.dump());
  }
  return c;
}

BfclSuiteConfig load_bfcl_config(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw BfclError(path.string() + ": cannot open for reading");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw BfclError(path.string() + ": malformed JSON (" + e.what() + ")");
  }
  return bfcl_config_from_json(j, path.string());
}

nlohmann::json to_json(const BfclSuiteConfig& c) {
  return nlohmann::json{{"name", c.name},
                        {"categories", c.categories},
                        {"per_category", c.per_category},
                        {"max_new_tokens", c.max_new_tokens},
                        {"mode", c.mode == BfclMode::prompt ? "prompt" : "native_fc"},
                        {"underscore_to_dot", c.underscore_to_dot},
                        {"overflow", c.truncate_overflow ? "truncate" : "skip"},
                        {"max_entry_details", c.max_entry_details}};
}

std::vector<const BfclEntry*> select_entries(const BfclDataset& ds, const BfclSuiteConfig& cfg) {
  const std::vector<std::string>& cats = cfg.categories.empty() ? ds.categories : cfg.categories;
  std::vector<const BfclEntry*> out;
  for (const auto& cat : cats) {
    std::vector<const BfclEntry*> in_cat;
    for (const auto& e : ds.entries) {
      if (e.category == cat) in_cat.push_back(&e);
    }
    if (in_cat.empty() && std::find(ds.categories.begin(), ds.categories.end(), cat) == ds.categories.end()) {
      throw BfclError("bfcl suite: category '" + cat + "' is not in the loaded data");
    }
    std::sort(in_cat.begin(), in_cat.end(), [](const BfclEntry* a, const BfclEntry* b) { return natural_less(a->id, b->id); });
    const std::size_t n = in_cat.size();
    const std::size_t k = cfg.per_category > 0 ? std::min<std::size_t>(n, static_cast<std::size_t>(cfg.per_category)) : n;
    // Evenly spaced over the id order: index floor(i * n / k).
    for (std::size_t i = 0; i < k; ++i) out.push_back(in_cat[i * n / k]);
  }
  return out;
}

records::SuiteResult run_bfcl_suite(Target& target, const BfclSuiteConfig& cfg, const std::filesystem::path& data_dir,
                                    Progress* progress) {
  const BfclDataset ds = load_bfcl_dataset(data_dir, cfg.categories);
  records::SuiteResult out = run_bfcl_suite(target, cfg, ds, progress);
  // The record's data_assets: every file read, relative to the data directory, with its sha256.
  std::error_code ec;
  const auto root = std::filesystem::weakly_canonical(data_dir, ec);
  for (const auto& f : ds.files) {
    const auto rel = std::filesystem::weakly_canonical(f, ec).lexically_relative(root);
    const std::string name = !rel.empty() && *rel.begin() != ".." ? rel.generic_string() : f.generic_string();
    out.details["data_files"][name] = sha256_file_hex(f);
  }
  return out;
}

records::SuiteResult run_bfcl_suite(Target& target, const BfclSuiteConfig& cfg, const BfclDataset& ds, Progress* progress) {
  using records::Better;
  using records::MetricKind;
  records::SuiteResult out;
  out.name = cfg.name;
  out.config = to_json(cfg);
  const auto entries = select_entries(ds, cfg);
  const engine::Tokenizer& tok = target.tokenizer();
  const int ctx = target.context_length();
  const ScoreOptions opt{cfg.mode == BfclMode::prompt ? OutputFormat::python : OutputFormat::fc,
                         cfg.mode == BfclMode::native_fc && cfg.underscore_to_dot};

  auto& overall = out.metrics["accuracy.overall"] =
      metric("fraction", Better::higher, MetricKind::accuracy, "BFCL AST-checker verdict per scored entry (1 = valid), all categories");
  auto& tps = out.metrics["decode_tokens_per_s"] =
      metric("tok/s", Better::higher, MetricKind::timed,
             "(tokens - 1) / (last - first token time) of the entry's cold request, per entry with >= 2 tokens");
  auto& per_entry = out.metrics["time_per_entry_ms"] =
      metric("ms", Better::lower, MetricKind::timed,
             "request start to last token of the entry's cold request (the scored request, or a separate salted "
             "request where the target's cache could not be emptied: details cold_timed_separately), per entry");
  std::size_t skipped = 0, truncated = 0, failed = 0, sent_as_ids = 0, timing_sent_as_ids = 0;
  std::string first_failure;
  std::vector<EntryVerdict> verdicts;
  std::map<std::string, std::size_t> error_types;
  nlohmann::json rows = nlohmann::json::array();
  NullProgress silent;
  Progress& prog = progress ? *progress : silent;
  ColdRequests cold(target);
  // A salted id prompt still fits the context: the salt displaces the prompt's head, as
  // truncation does (ColdRequests::salted_ids).
  const std::size_t id_budget = ctx > 0 ? static_cast<std::size_t>(std::max(1, ctx - cfg.max_new_tokens))
                                        : std::numeric_limits<std::size_t>::max();
  // The request for a cold salt, used only for a separate timing request (never scored): the
  // ids get it after BOS; the chat messages, at the head of their system message (or in one of
  // their own, which replaces a template's default system prompt in that request). Salt 0: the
  // request as built, the one that is scored.
  auto salted = [&](const TargetRequest& base) {
    return [&cold, &base, id_budget](std::uint64_t salt) {
      TargetRequest q = base;
      if (salt == 0) return q;
      const std::string text = cold.salt_text(salt);
      q.prompt_ids = cold.salted_ids(base.prompt_ids, salt, id_budget);
      q.prompt_text = text + base.prompt_text;
      if (q.messages.is_array()) {
        if (!q.messages.empty() && q.messages[0].value("role", "") == "system" && q.messages[0]["content"].is_string()) {
          q.messages[0]["content"] = text + q.messages[0]["content"].get<std::string>();
        } else {
          q.messages.insert(q.messages.begin(), nlohmann::json{{"role", "system"}, {"content", text}});
        }
      }
      return q;
    };
  };
  prog.begin("bfcl", static_cast<int>(entries.size()));

  for (const BfclEntry* e : entries) {
    prog.step(e->id);
    auto& cat_metric = out.metrics["accuracy." + e->category];
    if (cat_metric.unit.empty()) {
      cat_metric = metric("fraction", Better::higher, MetricKind::accuracy, "BFCL AST-checker verdict per scored entry of " + e->category);
    }
    TargetRequest req;
    req.max_new_tokens = cfg.max_new_tokens;
    req.sampling = engine::SamplingParams{};  // greedy
    nlohmann::ordered_json messages;
    if (cfg.mode == BfclMode::prompt) {
      messages = prompt_messages(*e);
    } else {
      messages = e->question.at(0);
      req.tools = nlohmann::json::parse(openai_tools(*e, cfg.underscore_to_dot).dump());
    }
    req.messages = nlohmann::json::parse(messages.dump());
    req.prompt_text = render_plain_text(messages);
    req.prompt_ids = tok.encode(req.prompt_text, true);
    bool was_truncated = false;
    if (ctx > 0 && static_cast<long long>(req.prompt_ids.size()) + cfg.max_new_tokens > ctx) {
      const long long budget = static_cast<long long>(ctx) - cfg.max_new_tokens;
      const auto bos = tok.bos_id();
      const bool has_bos = bos && !req.prompt_ids.empty() && req.prompt_ids[0] == *bos;
      if (!cfg.truncate_overflow || budget < (has_bos ? 2 : 1)) {
        ++skipped;
        if (static_cast<int>(rows.size()) < cfg.max_entry_details) {
          rows.push_back({{"id", e->id}, {"category", e->category}, {"skipped", true}, {"prompt_tokens", req.prompt_ids.size()}});
        }
        continue;
      }
      // Keep the tail (the question and the "Assistant:" cue) and BOS.
      std::vector<int> kept;
      if (has_bos) kept.push_back(*bos);
      const std::size_t tail = static_cast<std::size_t>(budget) - kept.size();
      kept.insert(kept.end(), req.prompt_ids.end() - static_cast<long>(tail), req.prompt_ids.end());
      std::string text;
      int prev = has_bos ? *bos : -1;
      for (std::size_t i = has_bos ? 1 : 0; i < kept.size(); ++i) {
        text += tok.token_bytes(prev, kept[i]);
        prev = kept[i];
      }
      req.prompt_ids = std::move(kept);
      req.prompt_text = std::move(text);
      // The cut prompt is no longer the conversation in `messages`: an endpoint would render
      // the whole of it (and the tools) into a prompt over its context and fail with 400. It
      // gets the cut prompt through /completions instead, the same ids the engine runs.
      req.messages = nullptr;
      req.tools = nullptr;
      was_truncated = true;
      ++truncated;
    }
    // Each entry is scored from BFCL's own request and timed cold (ColdRequests::send_scored):
    // where the target's cache cannot be emptied, the cold sample is a separate salted request
    // whose output is not scored. A salt is never in the scored prompt.
    const std::string what = "bfcl " + e->id;
    ColdRequests::Scored sent = cold.send_scored(salted(req), what);
    // Prompt mode over an endpoint: the server renders `messages` with its own chat template,
    // a longer prompt than the local rendering the context check above measured. When the
    // server rejects it for its context (HTTP 400), the entry is re-sent as the local
    // rendering's ids (which fit), the prompt the engine runs; counted, not failed.
    if (!sent.answer.ok && cfg.mode == BfclMode::prompt && !req.messages.is_null() && context_rejection(sent.answer.error)) {
      req.messages = nullptr;
      req.tools = nullptr;
      ++sent_as_ids;
      sent = cold.send_scored(salted(req), what);
    }
    // The same for a salted timing request alone (its salt line can push a chat prompt that
    // just fit over the server's context): re-timed as salted ids; the answer stays scored.
    if (sent.answer.ok && !sent.timing.ok && cfg.mode == BfclMode::prompt && !req.messages.is_null() &&
        context_rejection(sent.timing.error)) {
      TargetRequest as_ids = req;
      as_ids.messages = nullptr;
      as_ids.tools = nullptr;
      ++timing_sent_as_ids;
      sent.timing = cold.send_salted(salted(as_ids), what);
    }
    const TargetResponse& resp = sent.answer;
    std::string error;
    if (!resp.ok) error = resp.error;
    else if (!sent.timing.ok) error = "its salted timing request failed: " + sent.timing.error;
    if (!error.empty()) {
      ++failed;
      if (first_failure.empty()) first_failure = e->id + ": " + clip(error, 300);
      if (static_cast<int>(rows.size()) < cfg.max_entry_details) {
        rows.push_back({{"id", e->id}, {"category", e->category}, {"failed", true}, {"error", error}});
      }
      continue;
    }
    const nlohmann::ordered_json result = cfg.mode == BfclMode::prompt ? nlohmann::ordered_json(resp.text) : fc_result(resp);
    EntryVerdict v = score_entry(*e, result, opt);
    const double sample = v.valid ? 1.0 : 0.0;
    cat_metric.samples.push_back(sample);
    overall.samples.push_back(sample);
    if (!sent.timing.token_t_ns.empty()) {
      // The same rules as every suite (latency.hpp): tokens of the first read are left out of
      // the rate, and a request whose tokens all came at once has none; time per entry ends at
      // the last token, as E2E does everywhere. Always the cold sample, never a warm answer.
      const RequestLatency lat = compute_latency(sent.timing);
      if (lat.decode_tok_s) tps.samples.push_back(*lat.decode_tok_s);
      per_entry.samples.push_back(lat.e2e_ms);
    }
    if (!v.valid) ++error_types[v.error_type];
    if (static_cast<int>(rows.size()) < cfg.max_entry_details) {
      nlohmann::json row = {{"id", e->id},
                            {"category", e->category},
                            {"valid", v.valid},
                            {"error_type", v.valid ? nlohmann::json(nullptr) : nlohmann::json(v.error_type)},
                            // The target's own counts (usage): over HTTP the server's template decides the prompt.
                            {"prompt_tokens", resp.prompt_tokens > 0 ? resp.prompt_tokens : static_cast<int>(req.prompt_ids.size())},
                            {"cached_tokens", resp.cached_tokens},
                            {"truncated", was_truncated},
                            {"completion_tokens", resp.completion_tokens},
                            {"finish_reason", resp.finish_reason},
                            {"server_timings", resp.server_timings},
                            {"output", clip(cfg.mode == BfclMode::prompt ? resp.text : result.dump(), 300)},
                            {"timed", sent.timed_separately ? "salted timing request" : "scored request"}};
      if (sent.timed_separately) {
        // The cold sample's own counts: its prompt has the salt, its output is not scored.
        row["timing_request"] = {{"prompt_tokens", sent.timing.prompt_tokens},
                                 {"cached_tokens", sent.timing.cached_tokens},
                                 {"completion_tokens", sent.timing.completion_tokens},
                                 {"server_timings", sent.timing.server_timings}};
      }
      rows.push_back(std::move(row));
    }
    verdicts.push_back(std::move(v));
  }
  {
    const ScoreSummary s = summarize(verdicts);
    std::string line = std::to_string(s.correct) + "/" + std::to_string(s.total) + " valid";
    for (const auto& c : s.categories) line += ", " + c.category + " " + std::to_string(c.correct) + "/" + std::to_string(c.total);
    line += "; " + std::to_string(skipped) + " skipped, " + std::to_string(truncated) + " truncated, " + std::to_string(failed) +
            " failed, " + std::to_string(sent_as_ids) + " re-sent as ids";
    prog.end(line);
  }
  auto counted = [&](const char* name, std::size_t n, const char* what) {
    auto& m = out.metrics[name] = metric("count", Better::lower, MetricKind::counted, what);
    m.samples.push_back(static_cast<double>(n));
  };
  counted("entries_skipped", skipped, "entries whose prompt did not fit the context (overflow \"skip\"); not scored");
  counted("entries_truncated", truncated, "entries whose prompt head was dropped to fit the context; scored");
  counted("entries_failed", failed, "entries the target failed to answer; not scored");
  counted("entries_sent_as_ids", sent_as_ids,
          "prompt-mode entries whose chat rendering the server refused as over its context, re-sent as the local "
          "rendering's token ids; scored");
  if (failed > 0) {
    // A failed entry has no verdict: the accuracy would be over a subset the run did not choose.
    // The record keeps every figure but is invalid (runner.hpp), and the exit status says so.
    out.details["invalid_reason"] = std::to_string(failed) + " of " + std::to_string(entries.size()) +
                                    " entries failed (first: " + first_failure + ")";
  }
  if (tps.samples.empty()) out.metrics.erase("decode_tokens_per_s");
  if (per_entry.samples.empty()) out.metrics.erase("time_per_entry_ms");

  nlohmann::json errors = nlohmann::json::object();
  for (const auto& [k, n] : error_types) errors[k] = n;
  out.details["summary"] = nlohmann::json::parse(to_json(summarize(verdicts)).dump())["summary"];
  out.details["error_types"] = errors;
  out.details["entries"] = rows;
  out.details["target"] = target.name();
  cold.add_details(out.details);
  out.details["cold_timing_sent_as_ids"] = timing_sent_as_ids;
  return out;
}

std::filesystem::path default_bfcl_data_dir() { return resolve_data_dir(); }

BfclSuiteSetup bfcl_suite_setup(const SuiteOptions& options) {
  nlohmann::json section = options.config.is_object() ? options.config : nlohmann::json::object();
  nlohmann::json merged = nlohmann::json::object();
  if (section.contains("config")) {
    if (!section["config"].is_string()) bad(options.config_source, "field 'config' must be a string, got " + section["config"].dump());
    const auto path = resolve_resource(section["config"].get<std::string>(), "config");
    try {
      merged = nlohmann::json::parse(std::ifstream(path));
    } catch (const nlohmann::json::parse_error& e) {
      bad(path.string(), std::string("malformed JSON (") + e.what() + ")");
    }
    bfcl_config_from_json(merged, path.string());  // validates the file on its own
  }
  // The run's data directory (--data-dir) wins over the environment/default lookup.
  std::filesystem::path data_dir = options.data_dir.empty() ? default_bfcl_data_dir() : options.data_dir;
  for (const auto& [k, v] : section.items()) {
    if (k == "config" || k == "warmup" || k == "repetitions") continue;
    if (k == "data_dir") {
      if (!v.is_string()) bad(options.config_source, "field 'data_dir' must be a string, got " + v.dump());
      data_dir = v.get<std::string>();
      continue;
    }
    merged[k] = v;
  }
  // Checked here, before any suite runs: a wrong data directory is a usage error, not a failure
  // found after the suites before BFCL have run.
  if (!std::filesystem::is_directory(data_dir / "bfcl")) {
    throw BfclError((data_dir / "bfcl").string() +
                    ": no such directory (the BFCL data: the section's data_dir, else --data-dir, else $ATLAS_DATA_DIR, "
                    "else ../shared/data beside the checkout, else ./data)");
  }
  return {bfcl_config_from_json(merged, options.config_source), data_dir};
}

records::SuiteResult run_bfcl_suite(Target& target, const SuiteOptions& options) {
  const BfclSuiteSetup setup = bfcl_suite_setup(options);
  return run_bfcl_suite(target, setup.config, setup.data_dir, options.progress);
}

}  // namespace atlas::suites::bfcl
