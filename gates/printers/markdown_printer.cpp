#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "common/markdown_text.hpp"
#include "gates/printers/gate_printer.hpp"

namespace atlas::gates {
namespace {

// One escaper for all markdown (common/markdown_text.hpp): metric keys, reasons and file names
// come from records and files a PR author controls.
std::string cell(const std::string& s) { return md_text(s); }

const char* headline(Overall o) {
  switch (o) {
    case Overall::pass: return "pass";
    case Overall::regression: return "REGRESSION";
    case Overall::inconclusive: return "inconclusive";
  }
  return "?";
}

void table(const std::vector<const Verdict*>& rows, std::ostream& out) {
  out << "| metric | baseline | candidate | delta | verdict | why |\n|---|---:|---:|---:|---|---|\n";
  for (const auto* v : rows) {
    const std::string unit = v->unit.empty() ? "" : " " + v->unit;
    out << "| " << md_code(v->key) << " | " << format_value(v->baseline_value, v->unit) << (v->baseline_value ? unit : "") << " | "
        << format_value(v->candidate_value, v->unit) << (v->candidate_value ? unit : "") << " | " << format_delta_pct(v->delta_pct)
        << " | " << to_string(v->status) << " | " << cell(v->why) << " |\n";
  }
}

// Whether a verdict goes in the summary's table: every verdict other than `same`, and a `same`
// whose change exceeds the noise (a counted metric within its tolerance, a timed one within its
// margin): a reviewer must see a -71% even when the gate lets it pass.
bool beyond_noise(const Verdict& v) {
  if (v.status != VerdictStatus::same) return true;
  if (!v.baseline_value || !v.candidate_value) return false;
  return std::fabs(*v.candidate_value - *v.baseline_value) > v.noise.value_or(0.0);
}

// The order a reviewer reads in: what failed first, then what is open, then changes, then rows
// that are only reported (a few dozen "new" timed rows must not push a regression off screen).
int severity(VerdictStatus s) {
  switch (s) {
    case VerdictStatus::regression: return 0;
    case VerdictStatus::missing: return 1;
    case VerdictStatus::incomparable: return 2;
    case VerdictStatus::needs_more_samples: return 3;
    case VerdictStatus::improved: return 4;
    case VerdictStatus::same: return 5;
    case VerdictStatus::new_metric: return 6;
  }
  return 7;
}

class MarkdownPrinter final : public GatePrinter {
 public:
  void print(const GateReport& r, std::ostream& out) const override;
};

void MarkdownPrinter::print(const GateReport& r, std::ostream& out) const {
  out << "### atlas-bench gate " << md_code(r.gate) << ": **" << headline(r.decision.overall) << "**\n\n";
  out << "Machine class " << md_code(r.machine_class) << ", baseline " << md_code(r.baseline_file);
  if (!r.commit.empty()) out << ", commit " << md_code(r.commit.substr(0, 12));
  out << ".\n\n";
  for (const auto& why : r.decision.reasons) out << "- " << cell(why) << "\n";
  if (!r.decision.reasons.empty()) out << "\n";
  // Rows not in the baseline are reported, not gated: folded on their own (on a class without
  // stored timed values there are dozens), so the table holds what the gate judged.
  std::vector<const Verdict*> notable, quiet, fresh;
  for (const auto& v : r.comparison.verdicts) {
    if (v.status == VerdictStatus::new_metric) {
      fresh.push_back(&v);
    } else {
      (beyond_noise(v) ? notable : quiet).push_back(&v);
    }
  }
  std::stable_sort(notable.begin(), notable.end(),
                   [](const Verdict* a, const Verdict* b) { return severity(a->status) < severity(b->status); });
  if (!notable.empty()) table(notable, out);
  if (notable.empty() && !quiet.empty()) out << "All " << quiet.size() << " judged metrics unchanged within the noise.\n";
  if (!fresh.empty()) {
    out << "\n<details><summary>" << fresh.size()
        << " metrics not in the baseline (reported, not gated)</summary>\n\n";
    table(fresh, out);
    out << "\n</details>\n";
  }
  if (!quiet.empty()) {
    out << "\n<details><summary>" << quiet.size() << " metrics unchanged within the noise</summary>\n\n";
    table(quiet, out);
    out << "\n</details>\n";
  }
  if (r.merge_base && r.merge_base->ran && !r.merge_base->changes.empty()) {
    out << "\n**BASELINE changes since the merge-base** (`" << r.merge_base->base_commit.substr(0, 12) << "`):\n\n";
    for (const auto& c : r.merge_base->changes) out << "- " << cell(c) << "\n";
  }
  if (r.merge_base && r.merge_base->ran && !r.merge_base->violations.empty()) {
    out << "\n**BASELINE loosened without review** (merge-base " << md_code(r.merge_base->base_commit.substr(0, 12))
        << " of " << md_code(r.merge_base->target) << "):\n\n";
    for (const auto& v : r.merge_base->violations) {
      out << "- " << md_code(v.file);
      if (!v.metric.empty()) out << " " << md_code(v.metric);
      out << ": " << cell(v.problem)
          << "\n";
    }
  } else if (r.merge_base && !r.merge_base->ran) {
    out << "\nMerge-base check " << (r.merge_base->conclusive ? "skipped: " : "**could not run**: ")
        << cell(r.merge_base->skipped_reason) << "\n";
  }
  if (!r.quiet_box_reasons.empty()) {
    out << "\n**Box not quiet:**\n\n";
    for (const auto& why : r.quiet_box_reasons) out << "- " << cell(why) << "\n";
  }
  if (r.timed) print_timed_markdown(*r.timed, out);
  for (const auto& n : r.notes) out << "\n" << cell(n) << "\n";
  int dropped = 0;
  for (const auto& a : r.attempts) dropped += a.dropped ? 1 : 0;
  out << "\n" << r.attempts.size() << " attempt(s)";
  if (dropped) out << ", " << dropped << " dropped (throttled)";
  out << ".";
  if (!r.record_file.empty()) out << " Record: " << md_code(r.record_file) << ".";
  out << "\n";
}

}  // namespace

std::unique_ptr<GatePrinter> make_markdown_printer() { return std::make_unique<MarkdownPrinter>(); }

}  // namespace atlas::gates
