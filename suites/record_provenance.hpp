#pragma once
// Filling a record's provenance for a run on the in-process engine (records/provenance.hpp
// does the collecting): git state, build, machine, model file and its hashes.
#include <filesystem>

#include "records/record.hpp"
#include "suites/engine_target.hpp"

namespace atlas::suites {

/// git (of `repo_dir`), build and machine info.
void fill_run_provenance(records::Record& r, const std::filesystem::path& repo_dir);

/// model {path (relative to `data_dir` when under it), format, architecture, parameter_count,
/// sha256} and data_assets (model and
/// tokenizer files, paths relative to `data_dir` when under it, with their sha256); the engine
/// options go to config.engine. Throws atlas::InputError when a file cannot be read.
void fill_model_provenance(records::Record& r, EngineTarget& target, const std::filesystem::path& data_dir);

/// ATLAS_* environment variables in effect, as {name: value} (recorded in config.env).
nlohmann::json atlas_environment();

}  // namespace atlas::suites
