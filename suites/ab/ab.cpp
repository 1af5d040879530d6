#include "suites/ab/ab.hpp"

#include "common/number_format.hpp"
#include "records/metric.hpp"
#include "records/provenance.hpp"
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
                   {"n_a", c.n_a}, {"n_b", c.n_b}});
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
  rec.config["ab"] = {{"suite", suite.name}, {"a", request.a.to_json()}, {"b", request.b.to_json()},
                      {"rounds", request.options.repetitions}, {"warmup", request.options.warmup},
                      {"order", "interleaved A B A B"}};
  rec.config["target_a"] = ta->provenance();
  rec.config["target_b"] = tb->provenance();

  records::SuiteResult sa, sb;
  if (progress) progress->begin("ab " + suite.name, request.options.repetitions);
  for (int round = 0; round < request.options.repetitions; ++round) {
    SuiteOptions o = request.options;
    o.warmup = round == 0 ? request.options.warmup : 0;
    o.repetitions = 1;
    append_samples(sa, suite.run(*ta, o));
    append_samples(sb, suite.run(*tb, o));
    if (progress) {
      progress->step("round " + std::to_string(round + 1) + "/" + std::to_string(request.options.repetitions));
    }
  }
  if (progress) progress->end(std::to_string(request.options.repetitions) + " rounds, A B interleaved");
  sa.name = suite.name + "@a";
  sb.name = suite.name + "@b";
  sa.config["side"] = request.a.to_json();
  sb.config["side"] = request.b.to_json();
  out.comparisons = compare_sides(sa, sb);
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
    p.details = out.parity.to_json();
    rec.suites["parity"] = std::move(p);
    if (!out.parity.mismatches.empty()) {
      rec.invalid_reason = std::to_string(out.parity.mismatches.size()) + " of " +
                           std::to_string(out.parity.prompts) + " parity prompts differ between A and B";
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
  t.header = {"metric", "unit", "median A", "median B", "B/A", "p", "verdict"};
  for (const auto& c : result.comparisons) {
    // Values as every printer writes them (format_number); a hash (an output fingerprint) in hex,
    // where %.4f printed two different fingerprints alike, and with no ratio.
    const bool identity = records::is_identity_unit(c.unit);
    auto value = [&](double v) { return identity ? records::identity_hex(v, c.unit) : format_number(v); };
    t.rows.push_back({c.metric, c.unit, value(c.median_a), value(c.median_b), identity ? "-" : format_number(c.ratio),
                      c.kind == records::MetricKind::timed ? fmt_fixed(c.p_value, 4) : "exact", c.verdict});
  }
  if (result.parity.prompts > 0) {
    t.notes.push_back("greedy parity: " + std::to_string(result.parity.mismatches.size()) + " of " +
                      std::to_string(result.parity.prompts) + " prompts differ");
    for (const auto& m : result.parity.mismatches) {
      t.notes.push_back("  prompt " + std::to_string(m.prompt_index) + " diverges at output position " +
                        std::to_string(m.position) + ": prompt \"" + m.prompt_text + "\" A \"" + m.a_text +
                        "\" B \"" + m.b_text + "\"");
    }
  }
  return t;
}

}  // namespace atlas::suites
