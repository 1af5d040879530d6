#include "records/printers/diff_printer.hpp"

#include <string>

#include "records/error.hpp"

namespace atlas::records {

std::unique_ptr<DiffPrinter> make_diff_printer(std::string_view format) {
  if (format == "text") return make_text_printer();
  if (format == "md" || format == "markdown") return make_markdown_printer();
  if (format == "json") return make_json_printer();
  throw RecordError("unknown diff format \"" + std::string(format) + "\" (expected text, md/markdown or json)");
}

}  // namespace atlas::records
