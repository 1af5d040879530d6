#pragma once
// Where the data directory (models/, bfcl/) is: one order for every binary and test, so that
// atlas-bench, the benchmarks, the BFCL suite and the tests never disagree about it.
#include <filesystem>
#include <string>

namespace atlas {

/// The data directory, the first of:
///   1. `flag` (a command's --data-dir) when not empty;
///   2. $ATLAS_DATA_DIR when set and not empty;
///   3. ../shared/data beside the checkout this binary was built from, when it is a directory
///      (where CI and the Makefile keep it);
///   4. ./data (the checkout's data/ when run from there: only the manifest, so a command that
///      needs a model then names the missing file).
/// docs/environment.md lists ATLAS_DATA_DIR with the other variables.
std::filesystem::path resolve_data_dir(const std::string& flag = {});

}  // namespace atlas
