#pragma once
// Terminal table: metric | baseline | candidate | delta | verdict | why, then the decision and
// its reasons, merge-base violations and quiet-box findings.
#include "gates/printer.hpp"

namespace atlas::gates {

class TextPrinter final : public Printer {
 public:
  void print(const GateReport& report, std::ostream& out) const override;
};

}  // namespace atlas::gates
