#pragma once
// Everything a gate run produced, in one value that printers render.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "gates/compare.hpp"
#include "gates/gate_run.hpp"
#include "gates/merge_base_check.hpp"
#include "gates/timed_report.hpp"

namespace atlas::gates {

struct GateReport {
  std::string gate;
  std::string machine_class;
  std::string baseline_file;
  std::string commit;
  std::string record_file;              ///< where the record was written ("" when not written)
  Comparison comparison;
  GateDecision decision;
  std::optional<MergeBaseReport> merge_base;
  bool box_quiet = true;
  std::vector<std::string> quiet_box_reasons;
  std::vector<AttemptLog> attempts;
  std::optional<TimedReport> timed;     ///< the interleaved judgement against the merge-base
  std::vector<std::string> notes;       ///< printed before the result line
};

/// Formats a value with 4 significant digits ("12.35", "0.0001234", "1.2e+06"); "-" when absent.
std::string format_value(const std::optional<double>& v);
/// The same for a metric in `unit`: a hash (records::is_identity_unit) reads as hex, since %.4g
/// would print two different hashes alike.
std::string format_value(const std::optional<double>& v, std::string_view unit);
/// "+3.21%" / "-0.50%" (atlas::format_percent: "+0.00043%" for a change too small for two
/// decimals); "-" when absent.
std::string format_delta_pct(const std::optional<double>& v);

}  // namespace atlas::gates
