#pragma once
// Output formats of a gate report: the project's one printer interface (common/printer.hpp),
// one file per printer, as records/printers/ does for a record diff.
#include <memory>

#include "common/printer.hpp"
#include "gates/report.hpp"

namespace atlas::gates {

using GatePrinter = Printer<GateReport>;

/// Terminal table: metric | baseline | candidate | delta | verdict | why, then the merge-base
/// findings, quiet-box findings, attempts, the timed judgement and the result line
/// (text_printer.cpp).
std::unique_ptr<GatePrinter> make_text_printer();
/// Markdown summary for a pull-request comment (GitHub-flavoured: a headline with the result,
/// a table of changed and failing metrics first, unchanged ones folded in <details>;
/// markdown_printer.cpp).
std::unique_ptr<GatePrinter> make_markdown_printer();

}  // namespace atlas::gates
