#pragma once
// `atlas-bench report`: the store read into lines, each metric's steps and drift, a text
// summary for the CI log and the exit code that fails a nightly on drift.
#include <iosfwd>
#include <string>

#include "common/exit_code.hpp"
#include "trends/history.hpp"
#include "trends/trend.hpp"

namespace atlas::trends {

struct Report {
  History history;
  std::vector<LineTrend> trends;  ///< one per line, in History::lines order
  TrendSettings settings;
  /// Metrics whose drift is a regression: "<line id> <metric>".
  std::vector<std::string> drift_regressions() const;
};

/// Reads the store and analyses every line. Throws gates::GateError for a malformed BASELINE.
Report make_report(const HistoryOptions& options, const TrendSettings& settings = {});

/// The text summary: what was read and left out (with counts and reasons), the unparsable
/// records by name, every step (commit range, size, confidence) and every drift verdict that
/// is not "same", failing ones first.
void print_summary(const Report& r, std::ostream& out);

/// 1 (regression) when a drift is a regression, else 0. Skipped records do not fail a report:
/// they are named in it.
ExitCode exit_code(const Report& r);

/// The step as one line of text: "+2.1% (100 to 102.1 ms) between 3f9a0c1..77ab20e, confidence 0.999".
std::string step_text(const Line& line, const Series& s, const Step& st);

}  // namespace atlas::trends
