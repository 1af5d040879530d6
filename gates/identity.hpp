#pragma once
// The gate compares like with like: a BASELINE records what its metrics were measured on (the
// model's sha256, format and path; each suite's config, which for the instructions suite
// includes the CPU and valgrind the counts were made with), and a record that differs is an
// input error (exit 3) naming both sides, not a regression or a pass.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gates/baseline.hpp"
#include "records/record.hpp"

namespace atlas::gates {

/// {"model": {path, format, sha256}, "suites": {"<suite>": config}} of a record.
nlohmann::json identity_of(const records::Record& r);

/// Throws GateError when `baseline` names a model whose sha256 or format differs from `model`
/// (e.g. a .gguf run against a .bin baseline); the message names both files and formats and
/// `baseline_file`. A baseline without an identity, or an empty field on either side, passes.
void check_model_identity(const Baseline& baseline, const records::ModelInfo& model, const std::string& baseline_file);

/// The suites with metrics in `judged` (the stored values a gate compares) whose config the
/// baseline's identity does not pin (no identity.suites.<suite>), sorted. The judge runs the
/// merge-base's suite config; without a pin nothing shows that the stored values were measured
/// with it, so a suite config changed (and merged) since they were stored shapes every later
/// verdict unseen: a shrunk workload reads as an improvement that hides a regression.
std::vector<std::string> unpinned_suites(const Baseline& judged);

/// Throws GateError when a suite present in both the baseline's identity and `r` ran with a
/// different config (the message names the suite and the differing fields).
void check_suite_identity(const Baseline& baseline, const records::Record& r, const std::string& baseline_file);

}  // namespace atlas::gates
