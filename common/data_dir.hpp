#pragma once
// Where the data directory (models/, bfcl/) is: one order for every binary and test, so that
// atlas-bench, the benchmarks, the BFCL suite and the tests never disagree about it. The scripts
// that run before a build (Makefile, CMake, .ci/run, tools/) use tools/lib/data_dir.sh, the same
// order in shell; the ctest common/"data directory order" checks the two agree. Scripts that have
// a built binary may ask it instead: `atlas-bench data dir`. docs/environment.md, "The data
// directory", is the one description of the order for readers.
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
std::filesystem::path resolve_data_dir(const std::string& flag = {});

/// The same order with its inputs given: `env` is $ATLAS_DATA_DIR's value (nullptr: unset) and
/// `checkout` the source tree whose ../shared/data step 3 looks at. resolve_data_dir is this with
/// the environment and build_source_dir(); the test of tools/lib/data_dir.sh compares with it.
std::filesystem::path data_dir_in_order(const std::string& flag, const char* env, const std::filesystem::path& checkout);

}  // namespace atlas
