#pragma once
// A benchmark record: provenance plus per-suite metrics (schema: docs/record-schema.md,
// records/record.schema.json). Plain data; JSON I/O in records/record_io.hpp.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "records/metric.hpp"

namespace atlas::records {

inline constexpr int kSchemaVersion = 1;

struct GitInfo {
  std::string commit;     ///< full sha, "unknown" outside a checkout
  std::string branch;
  bool dirty = false;
  std::string diff_sha256;  ///< sha256 of `git diff HEAD` when dirty, else ""
};

struct BuildInfo {
  std::string compiler, flags, build_type, cuda_version;
};

struct MachineInfo {
  std::string cpu_model;
  int cores = 0;
  long long memory_bytes = 0;
  std::string gpu_name, gpu_driver;     ///< empty without a GPU (device 0's name)
  int gpu_count = 0;                    ///< GPUs the driver lists, 0 without a GPU
  /// Device 0's clocks when the run started: {"sm_mhz", "sm_max_mhz"} (NVML), else null.
  nlohmann::json gpu_clocks = nullptr;
  std::string machine_class;            ///< e.g. "cpu-2c-x86_64" or "h200"; names baseline folders
  /// The class this box detects when machine_class was given (--machine-class) and differs from
  /// it; "" otherwise. The given class picks the BASELINE judged, so a reader must see both.
  std::string detected_machine_class;
  std::string hostname;
};

struct ModelInfo {
  std::string path;                     ///< relative to the data directory when under it
  std::string format;                   ///< "llama2c", "gguf", "safetensors", ...
  std::string architecture;
  long long parameter_count = 0;
  std::string sha256;
};

struct Record {
  int schema_version = kSchemaVersion;
  std::string run_id;                  ///< unique per run
  std::string start_utc, end_utc;      ///< ISO-8601, e.g. 2026-11-29T14:33:20Z
  std::string gate_or_suite;           ///< "pr", "nightly", "ttft", ... (file name prefix)
  GitInfo git;
  BuildInfo build;
  MachineInfo machine;
  ModelInfo model;
  std::map<std::string, std::string> data_assets;   ///< relative asset path -> sha256
  nlohmann::json config = nlohmann::json::object(); ///< engine options, ATLAS_* env in effect
  nlohmann::json endpoint = nullptr;                ///< endpoint provenance when run over HTTP
  nlohmann::json quiet_box = nullptr;               ///< quiet-box report (before/during)
  std::map<std::string, SuiteResult> suites;        ///< suite name -> result
  nlohmann::json verdicts = nullptr;                ///< per-metric gate verdicts when gated
  bool valid = true;                                ///< false when the run failed (reason below)
  std::string invalid_reason;
  std::vector<std::string> merged_from;             ///< run_ids of the shards this record merges (else empty)
  std::vector<std::string> command_line;            ///< argv of the run, as typed (relative paths kept)
};

}  // namespace atlas::records
