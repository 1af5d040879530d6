#pragma once
// The data manifest (data/manifest.json): every data asset atlas-bench reads, with its size,
// sha256, license and upstream, so that a run can prove which bytes it measured and a changed or
// missing file is caught before it skews a benchmark.
#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace atlas::records {

struct DataAsset {
  std::string path;        ///< relative to the data directory, '/'-separated, e.g. "bfcl/BFCL_v4_multiple.json"
  std::string sha256;      ///< lower-case hex
  std::uint64_t size = 0;  ///< bytes
  std::string license;     ///< SPDX identifier, e.g. "MIT", "Apache-2.0"
  std::string upstream;    ///< where the bytes come from (URL)
  std::string source;      ///< the SOURCE.md (relative to the data directory) with the full provenance
};

struct DataManifest {
  int schema_version = 1;
  std::vector<DataAsset> assets;
};

/// Reads and validates a manifest. Throws RecordError naming the file, the JSON path and the
/// bad value (missing field, wrong type, a sha256 that is not 64 hex digits, an absolute path or
/// one containing "..", a duplicate path, an unknown schema_version).
DataManifest read_manifest(const std::filesystem::path& manifest_file);

/// Checks every asset under `data_dir`. Returns one line per problem, naming the file:
///   "<path>: missing (<data_dir>/<path>)", "<path>: size 12 bytes, manifest says 1056540",
///   "<path>: sha256 <got>, manifest says <want>". Empty when everything matches.
/// The sha256 is computed only when the size matches.
std::vector<std::string> verify(const DataManifest& manifest, const std::filesystem::path& data_dir);

/// sha256 of each file (paths relative to `data_dir`), for Record::data_assets.
/// Throws RecordError naming the first file that cannot be read.
std::map<std::string, std::string> asset_hashes(const std::filesystem::path& data_dir,
                                                std::span<const std::string> relative_paths);

}  // namespace atlas::records
