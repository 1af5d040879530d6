#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "records/printers/diff_printer.hpp"
#include "records/printers/format.hpp"

namespace atlas::records {
namespace {

class TextPrinter final : public DiffPrinter {
 public:
  void print(const RecordDiff& d, std::ostream& out) const override {
    for (const DiffSide* s : {&d.a, &d.b}) {
      out << (s == &d.a ? "A: " : "B: ") << s->label << "\n   " << printers::commit(*s) << "  " << s->machine_class
          << "  " << s->gate_or_suite << "  " << s->start_utc << (s->valid ? "" : "  INVALID") << "\n";
    }
    for (const auto& w : d.warnings) out << "warning: " << w << "\n";
    constexpr std::size_t kCols = 10;
    using Row = std::array<std::string, kCols>;
    std::vector<Row> rows;
    rows.push_back({"suite", "metric", "unit", "A p50", "B p50", "delta", "p", "n A/B", "change", "why"});
    for (const auto& m : d.metrics) {
      rows.push_back({m.suite, m.metric, m.unit, printers::value(m, true), printers::value(m, false),
                      printers::percent(m.delta_pct), printers::p_value(m.p_value),
                      std::to_string(m.n_a) + "/" + std::to_string(m.n_b), to_string(m.change), printers::note(m)});
    }
    std::array<std::size_t, kCols> width{};
    for (const auto& r : rows) {
      for (std::size_t i = 0; i < kCols; ++i) width[i] = std::max(width[i], r[i].size());
    }
    // Text columns left-aligned, numeric columns (3..7) right-aligned.
    for (const auto& r : rows) {
      std::string line;
      for (std::size_t i = 0; i < kCols; ++i) {
        const std::string pad(width[i] - r[i].size(), ' ');
        const bool numeric = i >= 3 && i <= 7;
        line += numeric ? pad + r[i] : r[i] + (i + 1 < kCols ? pad : "");
        if (i + 1 < kCols) line += "  ";
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out << line << "\n";
    }
    out << "summary: " << printers::counts(d) << " (" << printers::rule(d) << ")\n";
  }
};

}  // namespace

std::unique_ptr<DiffPrinter> make_text_printer() { return std::make_unique<TextPrinter>(); }

}  // namespace atlas::records
