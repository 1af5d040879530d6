#include "suites/table.hpp"

#include <algorithm>
#include <cstdio>
#include <ostream>

#include "common/markdown_text.hpp"
#include "suites/error.hpp"

namespace atlas::suites {

namespace {
// Display width in code points, so "µs" aligns like "us".
std::size_t display_width(const std::string& s) {
  std::size_t w = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++w;
  }
  return w;
}
std::string pad(const std::string& s, std::size_t width, bool left) {
  const std::size_t w = display_width(s);
  if (w >= width) return s;
  std::string fill(width - w, ' ');
  return left ? s + fill : fill + s;
}
}  // namespace

void TextTablePrinter::print(const Table& t, std::ostream& os) const {
  std::vector<std::size_t> widths(t.header.size(), 0);
  for (std::size_t c = 0; c < t.header.size(); ++c) widths[c] = display_width(t.header[c]);
  for (const auto& row : t.rows) {
    for (std::size_t c = 0; c < row.size() && c < widths.size(); ++c) widths[c] = std::max(widths[c], display_width(row[c]));
  }
  if (!t.title.empty()) os << t.title << "\n";
  auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t c = 0; c < widths.size(); ++c) {
      const std::string cell = c < cells.size() ? cells[c] : "";
      os << (c ? "  " : "") << pad(cell, widths[c], c == 0);
    }
    os << "\n";
  };
  line(t.header);
  std::size_t total = 0;
  for (auto w : widths) total += w;
  total += widths.empty() ? 0 : 2 * (widths.size() - 1);
  os << std::string(total, '-') << "\n";
  for (const auto& row : t.rows) line(row);
  for (const auto& n : t.notes) os << n << "\n";
}

namespace {
/// The project's one markdown escaper (common/markdown_text.hpp): metric names and notes come
/// from suite configs and records a pull request controls, and `run --format md` output is
/// pasted where links, mentions and HTML would act.
std::string md_cell(const std::string& s) { return md_text(s); }
}  // namespace

void MarkdownTablePrinter::print(const Table& t, std::ostream& os) const {
  if (!t.title.empty()) os << "**" << md_cell(t.title) << "**\n\n";
  os << "|";
  for (const auto& h : t.header) os << " " << md_cell(h) << " |";
  os << "\n|";
  for (std::size_t c = 0; c < t.header.size(); ++c) os << (c == 0 ? " --- |" : " ---: |");
  os << "\n";
  for (const auto& row : t.rows) {
    os << "|";
    for (std::size_t c = 0; c < t.header.size(); ++c) os << " " << md_cell(c < row.size() ? row[c] : "") << " |";
    os << "\n";
  }
  if (!t.notes.empty()) os << "\n";
  for (const auto& n : t.notes) os << md_cell(n) << "\n";
}

std::unique_ptr<TablePrinter> make_table_printer(std::string_view format) {
  if (format == "text") return std::make_unique<TextTablePrinter>();
  if (format == "markdown" || format == "md") return std::make_unique<MarkdownTablePrinter>();
  throw SuiteError("unknown table format '" + std::string(format) + "' (expected text or markdown)");
}

nlohmann::json table_to_json(const Table& t) {
  return {{"title", t.title}, {"header", t.header}, {"rows", t.rows}, {"notes", t.notes}};
}

Table table_from_json(const nlohmann::json& j) {
  try {
    Table t;
    t.title = j.at("title").get<std::string>();
    t.header = j.at("header").get<std::vector<std::string>>();
    t.rows = j.at("rows").get<std::vector<std::vector<std::string>>>();
    t.notes = j.value("notes", std::vector<std::string>{});
    return t;
  } catch (const nlohmann::json::exception& e) {
    throw SuiteError(std::string("not a table: ") + e.what());
  }
}

std::string fmt_fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace atlas::suites
