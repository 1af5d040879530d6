#include "suites/decode_anatomy/anatomy_table.hpp"

#include <optional>

#include "common/number_format.hpp"

namespace atlas::suites {

namespace {
constexpr const char* kNa = "n/a";

std::string per_token(const std::optional<double>& v, double tokens, int decimals) {
  return v ? fmt_fixed(*v / tokens, decimals) : kNa;
}
std::string graph_share(const StageAnatomy& s) {
  if (!s.launches || !s.graph_launches) return kNa;
  return *s.launches > 0 ? format_fraction_percent(*s.graph_launches / *s.launches, false) : "-";
}

std::string copy_counts(const StageAnatomy& s, double tokens) {
  if (!s.copies_h2d && !s.copies_d2h) return kNa;
  return per_token(s.copies_h2d, tokens, 2) + " / " + per_token(s.copies_d2h, tokens, 2);
}
}  // namespace

Table anatomy_table(const AnatomyWindow& window, double tokens, double wall_ns, const std::string& source_name,
                    const std::string& time_basis) {
  Table t;
  t.title = "decode anatomy (" + source_name + "), per generated token over " + fmt_fixed(tokens, 0) + " tokens";
  t.header = {"stage", "calls/token", "launches/token", "in graph", "host syncs/token", "copies H2D/D2H per token",
              "µs/token", "share of token"};
  const double wall_us = wall_ns / tokens / 1e3;
  double stage_ns = 0;
  bool all_times = true;
  StageAnatomy sum;  // whole-token totals; unknown as soon as one stage's value is unknown
  sum.launches = sum.graph_launches = sum.host_syncs = sum.copies_h2d = sum.copies_d2h = 0.0;
  auto add = [](std::optional<double>& to, const std::optional<double>& v) {
    if (to && v) *to += *v;
    else to.reset();
  };
  for (const auto& s : window.stages) {
    add(sum.launches, s.launches);
    add(sum.graph_launches, s.graph_launches);
    add(sum.host_syncs, s.host_syncs);
    add(sum.copies_h2d, s.copies_h2d);
    add(sum.copies_d2h, s.copies_d2h);
    const std::string in_graph = graph_share(s), copies = copy_counts(s, tokens);
    std::string share = kNa;
    if (s.time_ns) {
      stage_ns += *s.time_ns;
      if (wall_ns > 0) share = format_fraction_percent(*s.time_ns / wall_ns, false);
    } else {
      all_times = false;
    }
    t.rows.push_back({s.stage, per_token(s.calls, tokens, 2), per_token(s.launches, tokens, 2), in_graph,
                      per_token(s.host_syncs, tokens, 2), copies,
                      s.time_ns ? fmt_fixed(*s.time_ns / tokens / 1e3, 2) : kNa, share});
  }
  if (all_times && !window.stages.empty() && wall_ns > 0) {
    const double other = wall_ns - stage_ns;
    t.rows.push_back({"other (outside stages)", kNa, kNa, kNa, kNa, kNa, fmt_fixed(other / tokens / 1e3, 2),
                      format_fraction_percent(other / wall_ns, false)});
  }
  if (window.stages.empty()) sum = StageAnatomy{};
  t.rows.push_back({"token (wall, instrumented pass)", kNa, per_token(sum.launches, tokens, 2), graph_share(sum),
                    per_token(sum.host_syncs, tokens, 2), copy_counts(sum, tokens), fmt_fixed(wall_us, 2), format_percent(100, false)});
  t.notes.push_back("time basis: " + time_basis + "; n/a = not measured by this source; the wall row is the "
                    "instrumented pass's own (the counters-off wall per token is the metric above the table)");
  return t;
}

}  // namespace atlas::suites
