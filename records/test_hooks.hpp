#pragma once
// Test hooks a record was made with (the gate's planted slowdown and friends). Such a record
// proves the gate works; it must never move a baseline or pass for a real measurement.
#include <string>
#include <vector>

#include "records/record.hpp"

namespace atlas::records {

/// "name=value" for every test hook active in the run that made `r`, read from its provenance:
/// config.target.options.backend.inject_decode_delay_us > 0 (--inject-decode-delay-us),
/// config.target.options.backend.inject_decode_work > 0 (--inject-decode-work) and the
/// test-only environment hooks in config.env (ATLAS_CUDA_VETO_LAYER). Empty: a clean run.
std::vector<std::string> active_test_hooks(const Record& r);

}  // namespace atlas::records
