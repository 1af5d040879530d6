#pragma once
// One side of a judgement against the merge-base: `<binary> --data-dir D run --suite S --config C
// ... --out-dir <folder>` as a subprocess, its record read back. The same kind of subprocess for
// the counted and the timed judgement, so both sides of each are measured alike.
#include <filesystem>
#include <string>
#include <vector>

#include "records/record.hpp"

namespace atlas::runs {

/// "12.3 s": a duration for progress and build lines.
std::string seconds_text(double s);

/// The record path a `run` prints ("record: <path>"), "" when none.
std::string record_path_from(const std::string& run_stdout);

/// The last `n` characters of `s`, trailing blanks dropped, "..." in front when cut.
std::string last_lines(const std::string& s, std::size_t n = 600);

/// The `run` command line of one side.
std::vector<std::string> side_argv(const std::string& binary, const std::string& data_dir, const std::string& suites,
                                   const std::string& suite_config, const std::string& backend, const std::string& model,
                                   const std::filesystem::path& out_dir);

}  // namespace atlas::runs
