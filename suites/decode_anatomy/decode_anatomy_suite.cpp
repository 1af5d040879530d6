#include "suites/decode_anatomy/decode_anatomy_suite.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "records/stats.hpp"
#include "suites/decode_anatomy/anatomy_source.hpp"
#include "suites/decode_anatomy/anatomy_table.hpp"
#include "suites/decode_anatomy/latency_series.hpp"
#include "suites/error.hpp"
#include "suites/metric_util.hpp"
#include "suites/prompt_builder.hpp"

namespace atlas::suites {

using records::Better;
using records::MetricKind;

DecodeAnatomyConfig DecodeAnatomyConfig::from(const SuiteOptions& options) {
  ConfigSection s(options.config, options.config_source);
  s.allow_only({"warmup", "repetitions", "prompt_tokens", "decode_tokens", "series_tokens", "depths"});
  DecodeAnatomyConfig c;
  c.prompt_tokens = s.get_int("prompt_tokens", c.prompt_tokens, 1);
  c.decode_tokens = s.get_int("decode_tokens", c.decode_tokens, 2);
  c.series_tokens = s.get_int("series_tokens", c.series_tokens, 0);
  if (c.series_tokens == 1) throw SuiteError(options.config_source + ": series_tokens: 1: 0 (off) or at least 2");
  c.depths = s.get_int_list("depths", {}, 1);
  return c;
}

nlohmann::json DecodeAnatomyConfig::to_json() const {
  // The optional parts only when on: a BASELINE made before they existed keeps its identity
  // (gates/identity.hpp compares suite configs exactly).
  nlohmann::json j = {{"prompt_tokens", prompt_tokens}, {"decode_tokens", decode_tokens}};
  if (series_tokens > 0) j["series_tokens"] = series_tokens;
  if (!depths.empty()) j["depths"] = depths;
  return j;
}

std::uint32_t output_fingerprint(std::span<const int> ids) {
  std::uint32_t h = 2166136261u;
  for (int id : ids) {
    const auto v = static_cast<std::uint32_t>(id);
    for (int b = 0; b < 4; ++b) h = (h ^ ((v >> (8 * b)) & 0xffu)) * 16777619u;
  }
  return h;
}

namespace {

struct DecodeRun {
  std::vector<int> ids;
  double wall_ns = 0;  ///< request start to last token
  int cached = 0;
  std::vector<double> gaps_us;  ///< inter-token gaps, token i - token i-1, i = 1..n-1
  std::optional<double> wait_ns;  ///< the process's run-queue wait during the decode request
};

/// The generated ids: the target's, or, from an HTTP endpoint that streams text only, the text
/// encoded by the local tokenizer. Those are stable run to run but need not be the server's ids
/// (an SPM tokenizer adds its dummy-prefix space to the fragment); docs/metrics.md says so.
std::vector<int> generated_ids(const Target& target, const TargetResponse& r) {
  if (!r.output_ids.empty() || r.text.empty()) return r.output_ids;
  return target.tokenizer().encode(r.text, false);
}

// Prefill the prompt (its first token comes back), then decode N tokens as one-token steps.
DecodeRun decode_run(Target& target, const std::vector<int>& prompt, int n, AnatomySource* source,
                     AnatomyWindow* window) {
  target.reset_session();
  TargetRequest pre;
  pre.prompt_ids = prompt;
  pre.prompt_text = decode_ids(target.tokenizer(), prompt);
  pre.max_new_tokens = 1;
  pre.ignore_eos = true;
  pre.reuse_prefix = false;
  const TargetResponse first = generate_checked(target, pre, "decode-anatomy prefill");
  const std::vector<int> first_ids = generated_ids(target, first);
  if (first_ids.empty()) throw SuiteError(target.name() + ": decode-anatomy: the prefill request generated nothing");

  TargetRequest req = pre;
  req.prompt_ids.push_back(first_ids.front());
  req.prompt_text = decode_ids(target.tokenizer(), req.prompt_ids);
  req.max_new_tokens = n;
  req.reuse_prefix = true;
  if (source) source->begin();
  const TargetResponse resp = target.generate(req);
  if (source) *window = source->end();
  if (!resp.ok) throw SuiteError(target.name() + ": decode-anatomy decode: " + resp.error);
  if (static_cast<int>(resp.token_t_ns.size()) != n) {
    throw SuiteError(target.name() + ": decode-anatomy asked for " + std::to_string(n) + " tokens (ignore_eos), got " +
                     std::to_string(resp.token_t_ns.size()));
  }
  DecodeRun r;
  r.ids = generated_ids(target, resp);
  r.wall_ns = static_cast<double>(resp.token_t_ns.back() - resp.t_request_ns);
  r.cached = resp.cached_tokens;
  if (resp.run_queue_wait_ns) r.wait_ns = static_cast<double>(*resp.run_queue_wait_ns);
  for (std::size_t i = 1; i < resp.token_t_ns.size(); ++i)
    r.gaps_us.push_back(static_cast<double>(resp.token_t_ns[i] - resp.token_t_ns[i - 1]) / 1e3);
  return r;
}

/// What one decode mode's measured repetitions add up to.
struct ModeTotals {
  std::string mode;
  AnatomyWindow window;         ///< instrumented runs, summed
  double wall_ns = 0;           ///< instrumented wall time, summed
  double tokens = 0;            ///< instrumented tokens, summed
  std::vector<double> plain_us; ///< per-token wall µs of each plain (counters off) run
  std::string time_basis;       ///< the source's, as it stood after this mode's runs
  std::vector<std::string> vetoes;  ///< why capture was refused in this mode
  bool replayed_none = false;   ///< graph accounting says no step of this mode was replayed
};

/// The column name of a mode: a graph mode none of whose steps replayed a graph because a veto
/// held says so, as the investigation warned of its own graph flags.
std::string column_name(const ModeTotals& m) {
  if (m.mode.find("graph") == std::string::npos || !m.replayed_none || m.vetoes.empty()) return m.mode;
  std::string who;
  for (std::size_t i = 0; i < m.vetoes.size() && i < 3; ++i)
    who += (i ? ", " : "") + m.vetoes[i].substr(0, m.vetoes[i].find(':'));
  if (m.vetoes.size() > 3) who += ", ... (" + std::to_string(m.vetoes.size()) + " layers)";
  return m.mode + " (no effect: vetoed by " + who + ")";
}

/// The seed's first experiment: the same decode step replayed as a graph and launched eagerly,
/// one column per mode, per generated token.
Table modes_side_by_side(const std::vector<ModeTotals>& totals) {
  Table t;
  t.title = "decode modes side by side, per generated token";
  t.header = {"per token"};
  for (const auto& m : totals) t.header.push_back(column_name(m));
  auto row = [&](const std::string& name, auto value) {
    std::vector<std::string> cells{name};
    for (const auto& m : totals) cells.push_back(value(m));
    t.rows.push_back(std::move(cells));
  };
  auto sum_of = [](const ModeTotals& m, std::optional<double> StageAnatomy::*field) -> std::optional<double> {
    double s = 0;
    for (const auto& st : m.window.stages) {
      if (!(st.*field)) return std::nullopt;
      s += *(st.*field);
    }
    return s;
  };
  auto per_token = [&](std::optional<double> StageAnatomy::*field, int decimals) {
    return [=](const ModeTotals& m) {
      const auto v = sum_of(m, field);
      return v && m.tokens > 0 ? fmt_fixed(*v / m.tokens, decimals) : std::string("n/a");
    };
  };
  row("wall µs, counters off (median)",
      [](const ModeTotals& m) { return fmt_fixed(records::stats::median_or(m.plain_us, 0.0), 2); });
  row("wall µs, traced", [](const ModeTotals& m) { return m.tokens > 0 ? fmt_fixed(m.wall_ns / m.tokens / 1e3, 2) : "n/a"; });
  row("kernels", per_token(&StageAnatomy::launches, 2));
  row("of them replayed from a graph", per_token(&StageAnatomy::graph_launches, 2));
  row("host syncs", per_token(&StageAnatomy::host_syncs, 2));
  row("H2D copies", per_token(&StageAnatomy::copies_h2d, 2));
  row("D2H copies", per_token(&StageAnatomy::copies_d2h, 2));
  row("µs in stages (the source's time basis)", [&](const ModeTotals& m) {
    const auto ns = sum_of(m, &StageAnatomy::time_ns);
    return ns && m.tokens > 0 ? fmt_fixed(*ns / m.tokens / 1e3, 2) : std::string("n/a");
  });
  return t;
}

/// The roofline of the backend's own mode: the bytes a step must read (counted: it moves only
/// when the model or its layout does) and the share of the measured bandwidth the median plain
/// run reached. For a model whose weights are many times the cache, a step faster than DRAM
/// allows is an error in the bytes model or the clock, not a figure.
void add_roofline(records::SuiteResult& r, AnatomySource& source, const DecodeAnatomyConfig& cfg, const ModeTotals& own,
                  const std::string& target_name) {
  const int kv_len = cfg.prompt_tokens + 1 + cfg.decode_tokens / 2;  // the run's middle step
  const auto roof = source.roofline(kv_len);
  if (!roof || roof->bytes_per_token <= 0 || own.plain_us.empty()) return;
  const double us = records::stats::median_or(own.plain_us, 0.0);
  const double achieved = roof->bytes_per_token / (us * 1e-6);
  const double fraction = roof->bandwidth_bytes_per_s > 0 ? achieved / roof->bandwidth_bytes_per_s : 0.0;
  metric(r, "bytes_per_token", "bytes", Better::lower, MetricKind::counted,
         "bytes a decode step must read at KV length " + std::to_string(kv_len) +
             " (dense weights, the router and only the selected and shared experts, recurrent states, K/V), from "
             "the model's shapes")
      .samples.push_back(roof->bytes_per_token);
  if (fraction > 0)
    metric(r, "roofline_fraction", "ratio", Better::higher, MetricKind::timed,
           "bytes per token x decode tok/s over the measured device copy bandwidth (1 = at the memory roofline)")
        .samples.push_back(fraction);
  r.details["roofline"] = {{"kv_len", kv_len}, {"bytes_per_token", roof->bytes_per_token},
                           {"bandwidth_GBps", roof->bandwidth_bytes_per_s / 1e9}, {"achieved_GBps", achieved / 1e9},
                           {"fraction", fraction}, {"weight_bytes", roof->weight_bytes},
                           {"cache_bytes", roof->cache_bytes}};
  if (roof->cache_bytes > 0 && roof->weight_bytes > 4 * roof->cache_bytes && fraction > 1.05) {
    throw SuiteError(target_name + ": decode-anatomy: " + fmt_fixed(roof->bytes_per_token / 1e6, 1) + " MB per token at " +
                     fmt_fixed(1e6 / us, 1) + " tok/s is " + fmt_fixed(achieved / 1e9, 0) + " GB/s, above the measured " +
                     fmt_fixed(roof->bandwidth_bytes_per_s / 1e9, 0) + " GB/s for weights " +
                     fmt_fixed(roof->weight_bytes / roof->cache_bytes, 0) +
                     "x the cache: a step faster than DRAM allows (the bytes model or the clock is wrong)");
  }
}

}  // namespace

records::SuiteResult run_decode_anatomy_suite(Target& target, const SuiteOptions& options) {
  const DecodeAnatomyConfig cfg = DecodeAnatomyConfig::from(options);
  if (cfg.prompt_tokens + 1 + cfg.decode_tokens > target.context_length()) {
    throw SuiteError(options.config_source + ": prompt_tokens + 1 + decode_tokens = " +
                     std::to_string(cfg.prompt_tokens + 1 + cfg.decode_tokens) + " exceeds the target's context of " +
                     std::to_string(target.context_length()));
  }
  records::SuiteResult r = repeated_suite_result("decode-anatomy", cfg.to_json(), options);

  const std::vector<int> prompt = PromptBuilder(target.tokenizer()).prompt(cfg.prompt_tokens, options.seed);
  auto* provider = dynamic_cast<AnatomyProvider*>(&target);
  std::unique_ptr<AnatomySource> source = provider ? provider->make_anatomy_source() : nullptr;
  // One pass per decode mode (CUDA: graph replay, then eager); the backend's own mode keeps
  // the plain metric names, the others are prefixed "<mode>/".
  std::vector<std::string> modes = source ? source->modes() : std::vector<std::string>{};
  if (modes.empty()) modes.push_back("");

  const int series_n = std::min(cfg.series_tokens, target.context_length() - cfg.prompt_tokens - 1);
  const bool with_series = cfg.series_tokens > 0 && series_n >= 8;
  std::vector<int> depths;  // those the context holds
  nlohmann::json notes = nlohmann::json::array();
  for (int d : cfg.depths) {
    if (d + 1 + cfg.decode_tokens > target.context_length())
      notes.push_back("depth " + std::to_string(d) + " skipped: depth + 1 + decode_tokens exceeds the target's context of " +
                      std::to_string(target.context_length()));
    else
      depths.push_back(d);
  }
  if (cfg.series_tokens > 0 && series_n < cfg.series_tokens)
    notes.push_back("latency series of " + std::to_string(std::max(series_n, 0)) + " tokens, not " +
                    std::to_string(cfg.series_tokens) + ": the target's context is " +
                    std::to_string(target.context_length()) + (with_series ? "" : " (too short: no series)"));
  const int depth_reps = std::min(options.repetitions, 3);  // each one a prefill of the whole depth
  const int per_mode_plain = options.warmup + options.repetitions + (with_series ? 1 : 0) +
                             static_cast<int>(depths.size()) * depth_reps;
  Progress& progress = options.progress_or_null();
  progress.begin("decode-anatomy", static_cast<int>(modes.size()) *
                                       (per_mode_plain + (source ? options.warmup + options.repetitions : 0)));
  std::vector<int> reference_ids;
  std::vector<std::vector<std::uint32_t>> depth_fingerprints(depths.size());  // [depth][mode]
  std::vector<std::int64_t> first_routing(modes.size(), -1);  // each mode's first routing hash
  std::vector<ModeTotals> totals(modes.size());
  std::vector<std::vector<int>> plain_ids(modes.size());
  auto mode_prefix = [&](std::size_t mi) { return mi == 0 ? std::string() : modes[mi] + "/"; };
  auto mode_suffix = [&](std::size_t mi) { return modes[mi].empty() ? std::string() : " (" + modes[mi] + ")"; };
  auto rep_label = [&](int rep, std::size_t mi) {
    return (rep >= options.warmup ? "rep " + std::to_string(rep - options.warmup + 1) : std::string("warmup")) +
           mode_suffix(mi);
  };
  // Every counters-off run of every mode first, then the instrumented ones: a source may stay
  // attached to the process after its window (CUPTI does: on the H200 a decode run that followed
  // a traced one measured ~3% slower, docs/PERF.md), so no counters-off run follows one.
  for (std::size_t mi = 0; mi < modes.size(); ++mi) {
    const std::string p = mode_prefix(mi), in_mode = mode_suffix(mi);
    if (source && !modes[mi].empty()) source->set_mode(modes[mi]);
    ModeTotals& mt = totals[mi];
    mt.mode = modes[mi];
    if (source) source->take_graph_accounting();  // from here: this mode's plain runs
    if (source) mt.vetoes = source->graph_vetoes();
    for (int rep = 0; rep < options.warmup + options.repetitions; ++rep) {
      const bool measured = rep >= options.warmup;
      target.reset_routing_fingerprint();
      const DecodeRun plain = decode_run(target, prompt, cfg.decode_tokens, nullptr, nullptr);
      // Plain values, not an optional: gcc 12 warns maybe-uninitialized on the optional's payload.
      std::uint64_t routing = 0;
      bool has_routing = false;
      if (const auto f = target.routing_fingerprint()) routing = *f, has_routing = true;
      progress.step("plain " + rep_label(rep, mi));
      if (reference_ids.empty()) reference_ids = plain.ids;
      if (plain.ids != reference_ids)
        notes.push_back("repetition " + std::to_string(rep) + in_mode + ": greedy output differs from the first run");
      if (plain_ids[mi].empty()) plain_ids[mi] = plain.ids;
      if (plain.cached != cfg.prompt_tokens) {
        notes.push_back("decode request reused " + std::to_string(plain.cached) + " cached tokens, expected " +
                        std::to_string(cfg.prompt_tokens) + ": the first step was not a one-token forward");
      }
      if (measured) {
        const double us = plain.wall_ns / cfg.decode_tokens / 1e3;
        mt.plain_us.push_back(us);
        metric(r, p + "us_per_token", "us", Better::lower, MetricKind::timed,
               "decode wall time per generated token, counters off" + in_mode)
            .samples.push_back(us);
        if (plain.wait_ns) {
          // What a neighbour's CPU use stretched the run by is taken out: the paired timing
          // judgement compares processes that waited unequally (docs/gates.md, load).
          metric(r, p + "us_per_token_less_runqueue", "us", Better::lower, MetricKind::timed,
                 "decode wall time per generated token less the run-queue wait of the thread that ran it "
                 "during the request (sleeps and device waits stay in), counters off" + in_mode)
              .samples.push_back(std::max(0.0, plain.wall_ns - *plain.wait_ns) / cfg.decode_tokens / 1e3);
        }
        metric(r, p + "decode_tok_s", "tok/s", Better::higher, MetricKind::timed,
               "decode tokens per second, counters off" + in_mode)
            .samples.push_back(1e6 / us);
        metric(r, p + "output_fingerprint", "fnv1a32", Better::lower, MetricKind::counted,
               "FNV-1a 32 hash of the greedy output ids (any change means the output changed)" + in_mode)
            .samples.push_back(static_cast<double>(output_fingerprint(plain.ids)));
        if (has_routing && first_routing[mi] < 0) first_routing[mi] = static_cast<std::int64_t>(routing & 0x7fffffffffffffffULL);
        if (has_routing) {
          // Folded to 32 bits: a record's samples are doubles, exact up to 2^53.
          metric(r, p + "routing_fingerprint", "fnv1a32", Better::lower, MetricKind::counted,
                 "hash of every expert id every moe layer chose in the run, step by step (equal: identical "
                 "routing)" + in_mode)
              .samples.push_back(static_cast<double>(static_cast<std::uint32_t>(routing ^ (routing >> 32))));
        }
      }
    }
    const std::string mode_key = modes[mi].empty() ? "default" : modes[mi];
    if (with_series) {
      // Counters off, like the runs above: the series is what a user's decode looks like.
      const DecodeRun run = decode_run(target, prompt, series_n, nullptr, nullptr);
      progress.step("latency series" + in_mode);
      const LatencySeriesSummary ls = summarize_latency_series(run.gaps_us);
      auto timed = [&](const std::string& name, double v, const std::string& desc) {
        metric(r, p + name, "us", Better::lower, MetricKind::timed, desc + in_mode).samples.push_back(v);
      };
      timed("itl_p50_us", ls.p50_us, "median inter-token gap of one " + std::to_string(series_n) + "-token decode");
      timed("itl_p99_us", ls.p99_us, "p99 inter-token gap of one " + std::to_string(series_n) + "-token decode");
      timed("itl_max_us", ls.max_us, "largest inter-token gap of one " + std::to_string(series_n) + "-token decode");
      timed("periodic_stall_us", ls.stall ? ls.stall->excess_us : 0.0,
            "largest stall repeating every P steps of that decode, above its median gap (0: none stands out)");
      nlohmann::json j = to_json(ls);
      nlohmann::json gaps = nlohmann::json::array();
      for (double g : run.gaps_us) gaps.push_back(std::round(g * 100.0) / 100.0);
      j["itl_us"] = std::move(gaps);
      r.details["latency_series"][mode_key] = std::move(j);
      if (run.ids.size() >= plain_ids[mi].size() &&
          !std::equal(plain_ids[mi].begin(), plain_ids[mi].end(), run.ids.begin()))
        notes.push_back("latency series" + in_mode + ": its first tokens differ from the plain runs'");
    }
    for (std::size_t di = 0; di < depths.size(); ++di) {
      const int d = depths[di];
      const std::vector<int> deep = PromptBuilder(target.tokenizer()).prompt(d, options.seed);
      const std::string dp = p + "depth=" + std::to_string(d) + "/";
      for (int rep = 0; rep < depth_reps; ++rep) {
        const DecodeRun run = decode_run(target, deep, cfg.decode_tokens, nullptr, nullptr);
        progress.step("depth " + std::to_string(d) + " rep " + std::to_string(rep + 1) + in_mode);
        const double us = run.wall_ns / cfg.decode_tokens / 1e3;
        metric(r, dp + "decode_tok_s", "tok/s", Better::higher, MetricKind::timed,
               "decode tokens per second after a " + std::to_string(d) + "-token prompt, counters off" + in_mode)
            .samples.push_back(1e6 / us);
        const std::uint32_t f = output_fingerprint(run.ids);
        metric(r, dp + "output_fingerprint", "fnv1a32", Better::lower, MetricKind::counted,
               "FNV-1a 32 hash of the greedy output ids after a " + std::to_string(d) + "-token prompt" + in_mode)
            .samples.push_back(static_cast<double>(f));
        if (rep == 0) depth_fingerprints[di].push_back(f);
      }
    }
    GraphAccounting g;
    bool has_g = false;
    if (source)
      if (const auto a = source->take_graph_accounting()) g = *a, has_g = true;
    if (has_g) {
      const double steps = g.replayed_steps + g.eager_steps;
      mt.replayed_none = steps > 0 && g.replayed_steps == 0;
      if (steps > 0)  // counted: a veto or a sync inside the step turns replays into eager steps
        metric(r, p + "graph_replay_fraction", "ratio", Better::higher, MetricKind::counted,
               "fraction of decode steps run as one CUDA graph launch (the rest launched kernel by kernel)" + in_mode)
            .samples.push_back(g.replayed_steps / steps);
      // Captures happen once per context bucket per process, so how many fall in this suite
      // depends on what ran before it: a detail, not a gated number.
      r.details["graph_accounting"][mode_key] = {
          {"captures", g.captures}, {"capture_ms", g.capture_ms}, {"replayed_steps", g.replayed_steps},
          {"eager_steps", g.eager_steps}};
    }
    if (!mt.vetoes.empty()) r.details["graph_vetoes"][mode_key] = mt.vetoes;
  }
  for (std::size_t mi = 1; mi < modes.size(); ++mi) {
    // Host routing must choose what device routing chooses; a mode that routes differently is
    // a bug the fingerprints show, said here in words.
    if (first_routing[mi] >= 0 && first_routing[0] >= 0 && first_routing[mi] != first_routing[0])
      notes.push_back("mode " + modes[mi] + ": its routing fingerprint differs from " + modes[0] + "'s");
  }
  for (std::size_t di = 0; di < depths.size(); ++di) {
    const auto& f = depth_fingerprints[di];
    const bool agree = std::all_of(f.begin(), f.end(), [&](std::uint32_t v) { return v == f.front(); });
    // Counted: a mode that decodes differently at depth (a graph bucket, a KV layout) fails the gate.
    metric(r, "depth=" + std::to_string(depths[di]) + "/modes_agree", "bool", Better::higher, MetricKind::counted,
           "1 when every decode mode generated the same ids after a " + std::to_string(depths[di]) + "-token prompt")
        .samples.push_back(agree ? 1.0 : 0.0);
    if (!agree) notes.push_back("depth " + std::to_string(depths[di]) + ": the decode modes generated different ids");
  }
  if (source) add_roofline(r, *source, cfg, totals.front(), target.name());
  for (std::size_t mi = 0; source && mi < modes.size(); ++mi) {
    const std::string p = mode_prefix(mi), in_mode = mode_suffix(mi);
    if (!modes[mi].empty()) source->set_mode(modes[mi]);
    ModeTotals& mt = totals[mi];
    for (int rep = 0; rep < options.warmup + options.repetitions; ++rep) {
      const bool measured = rep >= options.warmup;
      AnatomyWindow w;
      const DecodeRun inst = decode_run(target, prompt, cfg.decode_tokens, source.get(), &w);
      progress.step("instrumented " + rep_label(rep, mi));
      if (inst.ids != plain_ids[mi])
        notes.push_back("repetition " + std::to_string(rep) + in_mode + ": instrumented output differs from the plain run");
      if (!measured) continue;
      mt.window.accumulate(w);
      mt.wall_ns += inst.wall_ns;
      mt.tokens += cfg.decode_tokens;
      for (const auto& s : w.stages) {
        const double n = cfg.decode_tokens;
        if (s.time_ns) {
          metric(r, p + "stage_us_per_token/" + s.stage, "us", Better::lower, MetricKind::timed,
                 "stage time per generated token (" + source->time_basis() + ")" + in_mode)
              .samples.push_back(*s.time_ns / n / 1e3);
        }
        if (s.calls) {
          metric(r, p + "stage_calls_per_token/" + s.stage, "count", Better::lower, MetricKind::counted,
                 "times the stage ran per generated token" + in_mode)
              .samples.push_back(*s.calls / n);
        }
        auto counted = [&](const char* what, const std::optional<double>& v, const std::string& desc) {
          if (v)
            metric(r, p + what + "/" + s.stage, "count", Better::lower, MetricKind::counted, desc + in_mode)
                .samples.push_back(*v / n);
        };
        counted("launches_per_token", s.launches, "kernel launches per generated token");
        counted("graph_launches_per_token", s.graph_launches, "kernel launches replayed from a CUDA graph per token");
        counted("host_syncs_per_token", s.host_syncs, "host waits on the device per generated token");
        counted("copies_h2d_per_token", s.copies_h2d, "host-to-device copies per generated token");
        counted("copies_d2h_per_token", s.copies_d2h, "device-to-host copies per generated token");
      }
    }
    mt.time_basis = source->time_basis();
  }
  if (source) {
    if (const auto captured = source->graph_captured()) {
      // Counted, so a change that breaks capture (a new veto, a host sync inside the step) fails
      // the gate even when the time does not move.
      metric(r, "decode_graph_captured", "bool", Better::higher, MetricKind::counted,
             "1 when the decode step replays a captured CUDA graph, 0 when it runs eagerly")
          .samples.push_back(*captured ? 1.0 : 0.0);
    }
  }
  r.details["fingerprint_hex"] = [&] {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%08x", output_fingerprint(reference_ids));
    return std::string(buf);
  }();
  r.details["output_ids"] = reference_ids;
  r.details["notes"] = notes;
  if (source && !totals.empty() && totals.front().tokens > 0) {
    const ModeTotals& primary = totals.front();
    const std::string title_source = source->name() + (primary.mode.empty() ? "" : ", " + primary.mode);
    r.details["source"] = source->name();
    r.details["instrumented_us_per_token"] = primary.wall_ns / primary.tokens / 1e3;
    r.details["table"] =
        table_to_json(anatomy_table(primary.window, primary.tokens, primary.wall_ns, title_source, primary.time_basis));
    nlohmann::json extra = nlohmann::json::array();
    for (std::size_t i = 1; i < totals.size(); ++i) {
      const ModeTotals& m = totals[i];
      if (m.tokens > 0)
        extra.push_back(table_to_json(
            anatomy_table(m.window, m.tokens, m.wall_ns, source->name() + ", " + m.mode, m.time_basis)));
    }
    if (totals.size() > 1) extra.push_back(table_to_json(modes_side_by_side(totals)));
    r.details["extra_tables"] = extra;
  } else {
    r.details["source"] = nullptr;
    AnatomyWindow none;
    const auto& m = r.metrics["us_per_token"].samples;
    double sum = 0;
    for (double v : m) sum += v;
    const double tokens = static_cast<double>(cfg.decode_tokens) * static_cast<double>(m.size());
    r.details["table"] = table_to_json(anatomy_table(none, tokens, sum * cfg.decode_tokens * 1e3, "wall clock only",
                                                  "request timestamps; this target exposes no stage counters"));
  }
  progress.end(cfg.decode_tokens == 0 ? "" : "fingerprint " + r.details["fingerprint_hex"].get<std::string>());
  return r;
}

}  // namespace atlas::suites
