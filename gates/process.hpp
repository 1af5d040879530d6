#pragma once
// The gates layer runs git through atlas::run_process (common/process.hpp, shared with the
// instructions suite, which runs valgrind).
#include "common/process.hpp"

namespace atlas::gates {
using atlas::ProcessResult;
using atlas::run_process;
}  // namespace atlas::gates
