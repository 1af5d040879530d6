#include "suites/report.hpp"

#include <algorithm>
#include <cmath>
#include <vector>
#include <cstdio>

#include "common/natural_order.hpp"
#include "common/number_format.hpp"
#include "records/summary.hpp"

namespace atlas::suites {

namespace {
std::string num(double v) { return format_number(v); }
}  // namespace

Table metrics_table(const records::SuiteResult& result) {
  Table t;
  t.title = result.name;
  t.header = {"metric", "unit", "better", "kind", "n", "p50", "p90", "p99", "min", "max"};
  // Numbers in metric names by value, so a load sweep reads rate=20, 80, 200 (not 20, 200, 80).
  std::vector<const std::pair<const std::string, records::Metric>*> ordered;
  for (const auto& kv : result.metrics) ordered.push_back(&kv);
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto* x, const auto* y) { return natural_less(x->first, y->first); });
  for (const auto* kv : ordered) {
    const auto& [name, m] = *kv;
    const records::Summary s = records::summarize(m.samples);
    // An identity (a hash) has no better direction and reads as hex.
    // Runs that disagree have no percentile worth a hash: "mixed", with the extremes shown.
    const bool identity = records::is_identity_unit(m.unit);
    const bool mixed = identity && !m.samples.empty() && !records::identity_value(m.samples);
    auto v = [&](double x) { return identity ? records::identity_hex(x, m.unit) : num(x); };
    auto pct = [&](double x) { return mixed ? std::string("mixed") : v(x); };
    t.rows.push_back({name, m.unit, identity ? "equal" : records::to_string(m.better), records::to_string(m.kind),
                      std::to_string(s.n), pct(s.p50), pct(s.p90), pct(s.p99), v(s.min), v(s.max)});
  }
  // What the suite left out and why (prompt lengths or traces that do not fit the context).
  if (const auto it = result.details.find("notes"); it != result.details.end() && it->is_array()) {
    for (const auto& n : *it) {
      if (n.is_string()) t.notes.push_back(n.get<std::string>());
    }
  }
  return t;
}

}  // namespace atlas::suites
