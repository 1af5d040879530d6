#pragma once
// Output formats of a record diff: the project's one printer interface (common/printer.hpp),
// one file per printer.
#include <memory>
#include <string_view>

#include "common/printer.hpp"
#include "records/diff.hpp"

namespace atlas::records {

using DiffPrinter = Printer<RecordDiff>;

/// Aligned plain-text table for terminals (text_printer.cpp).
std::unique_ptr<DiffPrinter> make_text_printer();
/// GitHub-flavoured Markdown table, for PR comments and job summaries (markdown_printer.cpp).
std::unique_ptr<DiffPrinter> make_markdown_printer();
/// Machine-readable JSON; NaN written as null (json_printer.cpp).
std::unique_ptr<DiffPrinter> make_json_printer();

/// "text" | "md" (or "markdown", as `run --format` spells it) | "json". Throws RecordError naming
/// the bad format otherwise.
std::unique_ptr<DiffPrinter> make_diff_printer(std::string_view format);

}  // namespace atlas::records
