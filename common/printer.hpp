#pragma once
// The one printer interface (nvbench's printer model): a result and the ways it is shown: an
// aligned table for terminals, markdown for pull-request comments and job summaries, JSON for
// programs. Each result has its printers made by factory functions, one per format: a record
// diff's in records/printers/ (DiffPrinter), a gate report's in gates/printers/ (GatePrinter),
// a suite's table in suites/table.hpp (TablePrinter), `bfcl score`'s in
// suites/bfcl/score_printer.hpp (ScorePrinter).
#include <ostream>

namespace atlas {

template <class Result>
class Printer {
 public:
  virtual ~Printer() = default;
  /// Writes the whole of `result` to `out`.
  virtual void print(const Result& result, std::ostream& out) const = 0;
};

}  // namespace atlas
