#include "suites/ab/ab.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/number_format.hpp"
#include "records/metric.hpp"
#include "records/provenance.hpp"
#include "records/stopping_rule.hpp"
#include "suites/error.hpp"
#include "suites/registry.hpp"
#include "suites/runner.hpp"

namespace atlas::suites {

void append_samples(records::SuiteResult& into, const records::SuiteResult& round) {
  if (into.metrics.empty() && into.details.empty()) {
    into = round;
    return;
  }
  for (const auto& [name, m] : round.metrics) {
    auto [it, inserted] = into.metrics.try_emplace(name, m);
    if (!inserted) it->second.samples.insert(it->second.samples.end(), m.samples.begin(), m.samples.end());
  }
}

namespace {

nlohmann::json comparisons_json(const std::vector<MetricComparison>& cs) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : cs) {
    out.push_back({{"metric", c.metric}, {"unit", c.unit}, {"better", records::to_string(c.better)},
                   {"kind", records::to_string(c.kind)}, {"median_a", c.median_a}, {"median_b", c.median_b},
                   {"ratio_b_over_a", c.ratio}, {"p_value", c.p_value}, {"verdict", c.verdict},
                   {"n_a", c.n_a}, {"n_b", c.n_b},
                   {"paired", c.paired ? records::to_json(*c.paired) : nlohmann::json(nullptr)}});
  }
  return out;
}

}  // namespace

AbResult run_ab(const AbRequest& request, const TargetFactory& make_target, Progress* progress) {
  const SuiteInfo& suite = find_suite(request.suite);
  auto make_side = [&](const SideSpec& s) {
    ScopedEnv env(s.env);
    return std::make_unique<EnvScopedTarget>(make_target(s), s.env);
  };
  auto ta = make_side(request.a);
  auto tb = make_side(request.b);

  AbResult out;
  records::Record& rec = out.record;
  rec.start_utc = records::utc_now_iso();
  rec.run_id = records::new_run_id();
  rec.gate_or_suite = "ab-" + suite.name;
  const int min_rounds = std::max(1, request.options.repetitions);
  const int max_rounds = std::max(min_rounds, request.max_rounds);
  const records::DecidedOrCap stop(records::Question::two_sided, min_rounds, max_rounds, 1e12, request.paired);
  rec.config["ab"] = {{"suite", suite.name}, {"a", request.a.to_json()}, {"b", request.b.to_json()},
                      {"min_rounds", min_rounds}, {"max_rounds", max_rounds}, {"warmup", request.options.warmup},
                      {"tolerance", request.tolerance}, {"confidence", request.paired.confidence},
                      {"order", "interleaved AB BA (counterbalanced)"}};
  rec.config["target_a"] = ta->provenance();
  rec.config["target_b"] = tb->provenance();

  records::SuiteResult sa, sb;
  if (progress) progress->begin("ab " + suite.name, min_rounds);
  int rounds = 0;
  std::string stop_reason;
  for (int round = 0; round < max_rounds; ++round) {
    SuiteOptions o = request.options;
    o.repetitions = 1;
    // Round 0 warms both sides up before either measures; then A B, B A, A B ...
    if (round == 0 && request.options.warmup > 0) {
      SuiteOptions w = o;
      w.repetitions = request.options.warmup;
      (void)suite.run(*ta, w);
      (void)suite.run(*tb, w);
    }
    o.warmup = 0;
    if (round % 2 == 0) {
      append_samples(sa, suite.run(*ta, o));
      append_samples(sb, suite.run(*tb, o));
    } else {
      append_samples(sb, suite.run(*tb, o));
      append_samples(sa, suite.run(*ta, o));
    }
    rounds = round + 1;
    if (progress) progress->step("round " + std::to_string(rounds) + "/" + std::to_string(min_rounds));
    if (rounds < min_rounds || rounds == max_rounds || rounds % 2 != 0) continue;
    records::RoundState st;
    st.rounds = st.rounds_run = rounds;
    for (const auto& c : compare_sides(sa, sb, rounds, request.tolerance, request.paired))
      if (c.paired) st.verdicts.push_back(*c.paired);
    if (auto why = stop.should_stop(st)) {
      stop_reason = *why;
      break;
    }
  }
  if (progress) progress->end(std::to_string(rounds) + " rounds, AB BA interleaved");
  rec.config["ab"]["rounds"] = rounds;
  rec.config["ab"]["stop_reason"] = stop_reason.empty() ? "rounds given" : stop_reason;
  sa.name = suite.name + "@a";
  sb.name = suite.name + "@b";
  sa.config["side"] = request.a.to_json();
  sb.config["side"] = request.b.to_json();
  out.rounds = rounds;
  out.tolerance = request.tolerance;
  out.confidence = request.paired.confidence;
  out.comparisons = compare_sides(sa, sb, rounds, request.tolerance, request.paired);
  rec.suites[sa.name] = std::move(sa);
  rec.suites[sb.name] = std::move(sb);

  if (request.parity) {
    out.parity = check_parity(*ta, *tb, request.parity_config, progress);
    records::SuiteResult p;
    p.name = "parity";
    p.config = {{"prompts", request.parity_config.prompts}, {"min_length", request.parity_config.min_length},
                {"max_length", request.parity_config.max_length},
                {"max_new_tokens", request.parity_config.max_new_tokens}, {"seed", request.parity_config.seed}};
    records::Metric m;
    m.unit = "prompts";
    m.better = records::Better::lower;
    m.kind = records::MetricKind::counted;
    m.description = "prompts whose greedy output differs between A and B";
    m.samples = {static_cast<double>(out.parity.mismatches.size())};
    p.metrics["parity_mismatches"] = m;
    if (out.parity.routed_prompts > 0) {
      records::Metric rm = m;
      rm.description = "prompts whose routing fingerprint (every expert id every moe layer chose) differs between A and B";
      rm.samples = {static_cast<double>(out.parity.routing_mismatches.size())};
      p.metrics["parity_routing_mismatches"] = rm;
    }
    p.details = out.parity.to_json();
    rec.suites["parity"] = std::move(p);
    if (!out.parity.mismatches.empty()) {
      rec.invalid_reason = std::to_string(out.parity.mismatches.size()) + " of " +
                           std::to_string(out.parity.prompts) + " parity prompts differ between A and B";
    } else if (!out.parity.routing_mismatches.empty()) {
      // Same text, other experts: random-weight text is degenerate, routing is not, so the
      // speedup measured here is of a computation that is not the same.
      rec.invalid_reason = std::to_string(out.parity.routing_mismatches.size()) + " of " +
                           std::to_string(out.parity.routed_prompts) +
                           " parity prompts routed to other experts in B than in A";
    }
  }
  rec.verdicts = {{"ab", comparisons_json(out.comparisons)}};
  rec.end_utc = records::utc_now_iso();
  out.target_a = std::move(ta);
  out.target_b = std::move(tb);
  return out;
}

Table ab_table(const AbResult& result) {
  Table t;
  t.title = "A/B " + result.record.gate_or_suite.substr(3) + " (B/A < 1 means B is smaller)";
  char conf[32];
  std::snprintf(conf, sizeof conf, "%g%% interval", 100 * result.confidence);
  t.header = {"metric", "unit", "median A", "median B", "B/A", conf, "MDE", "p", "verdict"};
  const auto pct = format_fraction_percent;
  for (const auto& c : result.comparisons) {
    // Values as every printer writes them (format_number); a hash (an output fingerprint) in hex,
    // where %.4f printed two different fingerprints alike, and with no ratio.
    const bool identity = records::is_identity_unit(c.unit);
    auto value = [&](double v) { return identity ? records::identity_hex(v, c.unit) : format_number(v); };
    // The interval is of B's change in B/A terms (+ = larger), whatever the metric's direction.
    std::string interval = "-", mde = "-";
    if (c.paired && !c.paired->ci_finite) {
      interval = "n/a (< " + std::to_string(records::min_rounds_for(records::PairedSettings{result.confidence, 0.95})) + " rounds)";
      mde = pct(c.paired->mde, false);
    } else if (c.paired) {
      const bool flip = c.better == records::Better::higher;  // judge_paired reports + = worse
      const double lo = flip ? 1 / (1 + c.paired->ci_hi) - 1 : c.paired->ci_lo;
      const double hi = flip ? 1 / (1 + c.paired->ci_lo) - 1 : c.paired->ci_hi;
      interval = "[" + pct(lo, true) + ", " + pct(hi, true) + "]";
      mde = pct(c.paired->mde, false);
    }
    t.rows.push_back({c.metric, c.unit, value(c.median_a), value(c.median_b), identity ? "-" : format_number(c.ratio),
                      interval, mde, c.kind == records::MetricKind::timed ? fmt_fixed(c.p_value, 4) : "exact",
                      c.verdict});
  }
  if (result.parity.prompts > 0) {
    t.notes.push_back("greedy parity: " + std::to_string(result.parity.mismatches.size()) + " of " +
                      std::to_string(result.parity.prompts) + " prompts differ");
    for (const auto& m : result.parity.mismatches) {
      t.notes.push_back("  prompt " + std::to_string(m.prompt_index) + " diverges at output position " +
                        std::to_string(m.position) + ": prompt \"" + m.prompt_text + "\" A \"" + m.a_text +
                        "\" B \"" + m.b_text + "\"");
    }
    const ParityReport& pr = result.parity;
    if (pr.routed_prompts == 0) {
      t.notes.push_back("routing: not compared: " + pr.routing_not_compared);
    } else if (pr.routing_mismatches.empty()) {
      t.notes.push_back("routing: identical over " + std::to_string(pr.routed_prompts) + " prompts (fingerprint " +
                        hex64(pr.routing_a) + " on both sides)");
    } else {
      t.notes.push_back("routing: differs in " + std::to_string(pr.routing_mismatches.size()) + " of " +
                        std::to_string(pr.routed_prompts) + " prompts (fingerprint A " + hex64(pr.routing_a) + ", B " +
                        hex64(pr.routing_b) + "); first: prompt " +
                        std::to_string(pr.routing_mismatches.front().prompt_index));
    }
  }
  t.notes.push_back(std::to_string(result.rounds) + " rounds; timed verdicts: paired Wilcoxon signed-rank interval of " +
                    "the per-round change against tolerance " + pct(result.tolerance, false) +
                    " (\"same\" only when a change of the tolerance would have been detected)");
  return t;
}

}  // namespace atlas::suites
