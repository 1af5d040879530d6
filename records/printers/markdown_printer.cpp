#include <string>

#include "common/markdown_text.hpp"

#include "records/printers/diff_printer.hpp"
#include "records/printers/format.hpp"

namespace atlas::records {
namespace {

// Every cell's text goes through the one escaper (common/markdown_text.hpp): metric and suite
// names come from records, and a PR author controls those.
std::string cell(const std::string& s) { return md_text(s); }

class MarkdownPrinter final : public DiffPrinter {
 public:
  void print(const RecordDiff& d, std::ostream& out) const override {
    out << "| | record | commit | machine | gate/suite | start (UTC) |\n|---|---|---|---|---|---|\n";
    for (const DiffSide* s : {&d.a, &d.b}) {
      out << "| " << (s == &d.a ? "A" : "B") << " | " << md_code(s->label) << " | " << md_code(printers::commit(*s)) << " | "
          << cell(s->machine_class) << " | " << cell(s->gate_or_suite) << " | " << cell(s->start_utc)
          << (s->valid ? "" : " (INVALID)") << " |\n";
    }
    for (const auto& w : d.warnings) out << "\n> **warning:** " << cell(w) << "\n";
    out << "\n| suite | metric | unit | A p50 | B p50 | delta | p | n A/B | change | why |\n"
           "|---|---|---|--:|--:|--:|--:|--:|---|---|\n";
    for (const auto& m : d.metrics) {
      const bool real = m.change == Change::regressed || m.change == Change::improved || m.change == Change::changed;
      const std::string change = real ? "**" + std::string(to_string(m.change)) + "**" : to_string(m.change);
      out << "| " << cell(m.suite) << " | " << cell(m.metric) << " | " << cell(m.unit) << " | "
          << printers::value(m, true) << " | " << printers::value(m, false) << " | " << printers::percent(m.delta_pct)
          << " | " << printers::p_value(m.p_value) << " | " << m.n_a << "/" << m.n_b << " | " << change << " | "
          << cell(printers::note(m)) << " |\n";
    }
    out << "\n" << printers::counts(d) << " (" << printers::rule(d) << ")\n";
  }
};

}  // namespace

std::unique_ptr<DiffPrinter> make_markdown_printer() { return std::make_unique<MarkdownPrinter>(); }

}  // namespace atlas::records
