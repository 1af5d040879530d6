#pragma once
// A plain table (title, header, rows of already-formatted cells) and the printers that render it.
// Every output format is a printer behind the project's one printer interface (common/printer.hpp).
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/printer.hpp"

namespace atlas::suites {

struct Table {
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;  ///< each row has header.size() cells
  std::vector<std::string> notes;              ///< printed under the table
};

using TablePrinter = Printer<Table>;

/// Aligned columns for a terminal: first column left-aligned, the rest right-aligned.
class TextTablePrinter final : public TablePrinter {
 public:
  void print(const Table& t, std::ostream& os) const override;
};

/// GitHub-flavoured Markdown (pipes in cells escaped).
class MarkdownTablePrinter final : public TablePrinter {
 public:
  void print(const Table& t, std::ostream& os) const override;
};

/// "text" or "markdown" (also "md"); throws SuiteError naming the bad format.
std::unique_ptr<TablePrinter> make_table_printer(std::string_view format);

/// {title, header, rows, notes} for a record's details, and back (throws SuiteError when the
/// JSON is not such a table).
nlohmann::json table_to_json(const Table& t);
Table table_from_json(const nlohmann::json& j);

/// Fixed-point formatting with `decimals` places ("12.35").
std::string fmt_fixed(double v, int decimals);

}  // namespace atlas::suites
