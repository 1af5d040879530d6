#pragma once
// The one printer interface (nvbench's printer model): a result and the ways it is shown: an
// aligned table for terminals, markdown for pull-request comments and job summaries, JSON for
// programs. Each layer keeps the printers of its own result in a printers/ folder, one file per
// format, made by factory functions: records/printers/ for a record diff, gates/printers/ for a
// gate report. Suites print their tables through suites/table.hpp, which renders one Table type
// rather than one result per format.
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
