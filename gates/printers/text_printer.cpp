#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "gates/printers/gate_printer.hpp"
#include "gates/unstored_timed.hpp"

namespace atlas::gates {
namespace {

class TextPrinter final : public GatePrinter {
 public:
  void print(const GateReport& r, std::ostream& out) const override;
};

void TextPrinter::print(const GateReport& r, std::ostream& out) const {
  out << "gate " << r.gate << " on " << r.machine_class << " (baseline " << r.baseline_file << ")\n";
  using Row = std::array<std::string, 6>;
  std::vector<Row> rows = {{"metric", "baseline", "candidate", "delta", "verdict", "why"}};
  // Timed metrics a machine class never stores (not a quiet class: explain_unstored_timed) are
  // one line, not a row each: on a CPU runner they were ~70 identical rows a reader had to skip
  // to find what was judged. Their values are in the record.
  std::vector<std::string> unstored;
  for (const auto& v : r.comparison.verdicts) {
    if (v.status == VerdictStatus::new_metric && v.why.starts_with(kUnstoredTimedWhy)) {
      unstored.push_back(v.key);
      continue;
    }
    const std::string unit = v.unit.empty() ? "" : " " + v.unit;
    rows.push_back({v.key, format_value(v.baseline_value, v.unit) + (v.baseline_value ? unit : ""),
                    format_value(v.candidate_value, v.unit) + (v.candidate_value ? unit : ""), format_delta_pct(v.delta_pct),
                    to_string(v.status), v.why});
  }
  std::array<std::size_t, 6> width{};
  for (const auto& row : rows) {
    for (std::size_t c = 0; c + 1 < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  for (const auto& row : rows) {
    if (rows.size() == 1) break;  // nothing judged against the stored baseline
    for (std::size_t c = 0; c < row.size(); ++c) {
      out << row[c];
      if (c + 1 < row.size()) out << std::string(width[c] - row[c].size() + 2, ' ');
    }
    out << "\n";
  }
  if (!unstored.empty()) {
    out << unstored.size() << " timed metrics reported, not gated on " << r.machine_class
        << " (not a quiet machine class: `baseline ratchet` never stores timed values there; the values are in the "
           "record), e.g. "
        << unstored.front() << "\n";
  }
  if (r.merge_base) {
    if (!r.merge_base->ran) {
      out << "merge-base check " << (r.merge_base->conclusive ? "skipped: " : "could not run: ")
          << r.merge_base->skipped_reason << "\n";
    } else {
      // Every accept, remove and unfreeze since the merge-base, licensed or not: the reviewer
      // reads them here, beside the verdict, not only in the BASELINE's diff.
      for (const auto& c : r.merge_base->changes) out << "since the merge-base: " << c << "\n";
      for (const auto& v : r.merge_base->violations) {
        out << "merge-base (" << r.merge_base->target << " @ " << r.merge_base->base_commit.substr(0, 12) << "): " << v.file
            << (v.metric.empty() ? "" : " " + v.metric) << ": " << v.problem << "\n";
      }
    }
  }
  for (const auto& why : r.quiet_box_reasons) out << "quiet-box: " << why << "\n";
  // Said once, so a reader who sees the box was busy knows what that could change.
  if (!r.quiet_box_reasons.empty())
    out << "quiet-box: where this class gates stored timed values, a busy box makes that judgement inconclusive "
           "(exit 2) unless a counted metric regressed; the timed judgement against the merge-base weighs each "
           "round's own load instead (docs/gates.md)\n";
  for (const auto& a : r.attempts) {
    // Attempts are counted from 1 for people, as the progress line does ("attempt 2 (rerun or
    // confirmation)"); AttemptLog::attempt counts from 0.
    const int number = a.attempt + 1;
    if (a.attempt > 0 && !a.because.empty()) {
      // Why the gate ran again: the metrics that asked (at most 5 named).
      out << "attempt " << number << ": " << (a.confirmation ? "confirmation run of" : "rerun of");
      for (const auto& s : a.suites) out << " " << s;
      out << (a.confirmation ? " for the timed regression of " : " for more samples of ");
      for (std::size_t i = 0; i < a.because.size() && i < 5; ++i) out << (i ? ", " : "") << a.because[i];
      if (a.because.size() > 5) out << " and " << a.because.size() - 5 << " more";
      out << "\n";
    }
    if (a.dropped) out << "attempt " << number << " dropped: " << a.drop_reason << "\n";
  }
  if (r.timed) print_timed_text(*r.timed, out);
  for (const auto& n : r.notes) out << n << "\n";
  out << "result: " << to_string(r.decision.overall);
  for (const auto& why : r.decision.reasons) out << "; " << why;
  out << "\n";
  if (!r.record_file.empty()) out << "record: " << r.record_file << "\n";
}

}  // namespace

std::unique_ptr<GatePrinter> make_text_printer() { return std::make_unique<TextPrinter>(); }

}  // namespace atlas::gates
