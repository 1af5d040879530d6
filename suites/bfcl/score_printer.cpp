#include "suites/bfcl/score_printer.hpp"

#include <cstdio>
#include <map>
#include <set>

#include "common/number_format.hpp"
#include "suites/bfcl/bfcl_error.hpp"

namespace atlas::suites::bfcl {

namespace {

class JsonLinesPrinter : public ScorePrinter {
 public:
  void print(const ScoredResults& r, std::ostream& os) const override {
    for (const auto& v : r.verdicts) os << to_json(v).dump() << "\n";
    os << to_json(r.summary).dump() << "\n";
  }
};

// A fraction as a percentage, the one way (common/number_format.hpp); the columns right-align it.
std::string pct(double v) { return format_fraction_percent(v, false); }

class TablePrinter : public ScorePrinter {
 public:
  void print(const ScoredResults& r, std::ostream& os) const override {
    const ScoreSummary& summary = r.summary;
    char line[160];
    std::snprintf(line, sizeof line, "%-24s %9s %8s %8s\n", "category", "accuracy", "correct", "total");
    os << line;
    for (const auto& c : summary.categories) {
      std::snprintf(line, sizeof line, "%-24s %9s %8zu %8zu\n", c.category.c_str(), pct(c.accuracy()).c_str(), c.correct, c.total);
      os << line;
    }
    const double overall = summary.total ? static_cast<double>(summary.correct) / static_cast<double>(summary.total) : 0.0;
    std::snprintf(line, sizeof line, "%-24s %9s %8zu %8zu\n", "all lines (pooled)", pct(overall).c_str(), summary.correct, summary.total);
    os << line << "\n";
    auto row = [&](const char* name, const std::optional<double>& v) {
      std::snprintf(line, sizeof line, "%-52s %9s\n", name, v ? pct(*v).c_str() : "N/A");
      os << line;
    };
    row("non-live AST (unweighted mean of 4 categories)", summary.non_live_ast);
    row("live AST (pooled over 4 categories)", summary.live_ast);
    row("irrelevance (mean of irrelevance, live_irrelevance)", summary.irrelevance);
    row("relevance (live_relevance)", summary.relevance);
    std::map<std::string, std::size_t> errors;
    for (const auto& v : r.verdicts) {
      if (!v.valid) ++errors[v.error_type];
    }
    if (!errors.empty()) {
      os << "\nerror types:\n";
      for (const auto& [type, n] : errors) {
        std::snprintf(line, sizeof line, "  %-56s %6zu\n", type.c_str(), n);
        os << line;
      }
    }
  }
};

}  // namespace

std::unique_ptr<ScorePrinter> make_json_lines_printer() { return std::make_unique<JsonLinesPrinter>(); }
std::unique_ptr<ScorePrinter> make_table_printer() { return std::make_unique<TablePrinter>(); }

void score_results_file(const std::filesystem::path& data_dir, const std::filesystem::path& results_path,
                        const ScoreOptions& opt, const ScorePrinter& printer, std::ostream& os) {
  const auto lines = read_results_file(results_path, opt.format);
  // Load only the categories the results mention (plus nothing when the file is empty).
  std::set<std::string> cats;
  for (const auto& l : lines) cats.insert(category_of_id(l.id));
  std::vector<std::string> wanted;
  for (const auto& c : all_categories()) {
    if (cats.count(c)) wanted.push_back(c);
  }
  for (const auto& l : lines) {
    bool known = false;
    for (const auto& c : all_categories()) known |= c == category_of_id(l.id);
    if (!known) throw BfclError(l.where + ": field 'id': '" + l.id + "' is not an id of a BFCL category of this subset");
  }
  BfclDataset ds;
  if (!wanted.empty()) ds = load_bfcl_dataset(data_dir, wanted);
  ScoredResults scored;
  scored.verdicts = score_results(ds, lines, opt);
  scored.summary = summarize(scored.verdicts);
  printer.print(scored, os);
}

}  // namespace atlas::suites::bfcl
