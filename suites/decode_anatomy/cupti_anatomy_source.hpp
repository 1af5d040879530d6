#pragma once
// The decode-anatomy suite's source for the CUDA backend: CUPTI traces every decode step in its
// own window (the decoder's step observer), kernels are attributed to stages through the graph
// node ids recorded at capture (replays) or by launch order (eager steps), stage time
// is GPU time charged exclusively (with PDL a kernel starts while its predecessor drains), and
// launches, graph replays, syncs and copies come from CUPTI's activity and API records.
#include <memory>

#include "suites/decode_anatomy/anatomy_source.hpp"

namespace atlas::engine { class Backend; }

namespace atlas::suites {

/// A CUPTI source for a backend made by make_cuda_backend; null for any other backend or in a
/// build without CUDA.
std::unique_ptr<AnatomySource> make_cupti_anatomy_source(engine::Backend& backend);

}  // namespace atlas::suites
