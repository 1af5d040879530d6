#include "records/printers/listing_printer.hpp"

#include <string>

#include <nlohmann/json.hpp>

#include "records/error.hpp"

namespace atlas::records {
namespace {

using nlohmann::json;

class ListingTextPrinter final : public ListingPrinter {
 public:
  void print(const std::vector<ListedRecord>& rows, std::ostream& out) const override {
    if (rows.empty()) return;
    line(out, {"utc", "machine_class", "commit", "kind", "target", "test_hooks", "path"});
    for (const auto& r : rows) {
      const auto& s = r.stored;
      line(out, {s.utc, s.machine_class, s.commit.substr(0, 12) + (s.dirty ? "-dirty" : ""), r.kind_text(),
                 r.kind ? r.kind->target : "", r.hooks_text(), s.path.string()});
    }
  }

 private:
  /// Each column left-aligned and padded to its width, two spaces apart; the last unpadded.
  static void line(std::ostream& out, const std::vector<std::string>& cells) {
    static constexpr std::size_t kWidth[] = {16, 20, 18, 22, 12, 24};
    for (std::size_t i = 0; i < cells.size(); ++i) {
      out << cells[i];
      if (i + 1 == cells.size()) break;
      if (cells[i].size() < kWidth[i]) out << std::string(kWidth[i] - cells[i].size(), ' ');
      out << "  ";
    }
    out << "\n";
  }
};

class ListingJsonPrinter final : public ListingPrinter {
 public:
  void print(const std::vector<ListedRecord>& rows, std::ostream& out) const override {
    json j = json::array();
    for (const auto& r : rows) {
      const auto& s = r.stored;
      const auto& k = r.kind;
      j.push_back({{"path", s.path.string()},
                   {"machine_class", s.machine_class},
                   {"commit", s.commit},
                   {"dirty", s.dirty},
                   {"gate_or_suite", s.gate_or_suite},
                   {"utc", s.utc},
                   {"kind", r.kind_text()},
                   {"target", k ? json(k->target) : json(nullptr)},
                   {"test_hooks", k ? json(k->hooks) : json(nullptr)},
                   {"valid", k ? json(k->valid) : json(nullptr)}});
      if (!k) j.back()["error"] = r.error;
      if (!r.refused.empty()) j.back()["refused"] = r.refused;
    }
    out << j.dump(2) << "\n";
  }
};

}  // namespace

std::unique_ptr<ListingPrinter> make_listing_printer(std::string_view format) {
  if (format == "text") return std::make_unique<ListingTextPrinter>();
  if (format == "json") return std::make_unique<ListingJsonPrinter>();
  throw RecordError("records list: unknown format '" + std::string(format) + "' (text | json)");
}

}  // namespace atlas::records
