#pragma once
// Markdown summary for a pull-request comment (GitHub-flavoured: a headline with the result,
// a table of changed and failing metrics first, unchanged ones folded in <details>).
#include "gates/printer.hpp"

namespace atlas::gates {

class MarkdownPrinter final : public Printer {
 public:
  void print(const GateReport& report, std::ostream& out) const override;
};

}  // namespace atlas::gates
