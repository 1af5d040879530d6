#include <cmath>

#include <nlohmann/json.hpp>

#include "records/printers/diff_printer.hpp"
#include "records/printers/format.hpp"

namespace atlas::records {
namespace {

using nlohmann::json;

json num(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json side(const DiffSide& s) {
  return {{"label", s.label},       {"commit", s.commit},       {"branch", s.branch},
          {"dirty", s.dirty},       {"machine_class", s.machine_class}, {"gate_or_suite", s.gate_or_suite},
          {"start_utc", s.start_utc}, {"valid", s.valid}};
}

class JsonPrinter final : public DiffPrinter {
 public:
  void print(const RecordDiff& d, std::ostream& out) const override {
    json metrics = json::array();
    for (const auto& m : d.metrics) {
      metrics.push_back({{"suite", m.suite},
                         {"metric", m.metric},
                         {"unit", m.unit},
                         {"better", to_string(m.better)},
                         {"kind", to_string(m.kind)},
                         {"n_a", m.n_a},
                         {"n_b", m.n_b},
                         {"p50_a", num(m.p50_a)},
                         {"p50_b", num(m.p50_b)},
                         {"delta_pct", num(m.delta_pct)},
                         {"p_value", num(m.p_value)},
                         {"test", m.test},
                         {"significant", m.significant},
                         {"change", to_string(m.change)},
                         {"why", m.why},
                         {"caveat", m.caveat}});
    }
    json counts = json::object();
    for (Change c : {Change::improved, Change::regressed, Change::changed, Change::unchanged, Change::noise,
                     Change::added, Change::removed, Change::incomparable}) {
      counts[to_string(c)] = d.count(c);
    }
    const json j = {{"a", side(d.a)},
                    {"b", side(d.b)},
                    {"options", {{"alpha", d.options.alpha}, {"threshold_pct", d.options.threshold_pct}, {"rules", printers::rule(d)}}},
                    {"metrics", std::move(metrics)},
                    {"counts", std::move(counts)},
                    {"warnings", d.warnings}};
    out << j.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  }
};

}  // namespace

std::unique_ptr<DiffPrinter> make_json_printer() { return std::make_unique<JsonPrinter>(); }

}  // namespace atlas::records
