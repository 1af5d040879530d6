#pragma once
// One interface for every way a gate result is shown (nvbench's printer model): the terminal
// table (text_printer.hpp) and the PR-comment summary (markdown_printer.hpp).
#include <ostream>

#include "gates/report.hpp"

namespace atlas::gates {

class Printer {
 public:
  virtual ~Printer() = default;
  virtual void print(const GateReport& report, std::ostream& out) const = 0;
};

}  // namespace atlas::gates
