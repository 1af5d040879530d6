#pragma once
// Programmatic dependent launch (PDL, sm_90): a kernel launched with it may start while the
// previous kernel in the stream is finishing; it must execute pdl_wait() before touching any
// memory an earlier kernel writes or reads-then-others-write. Decode kernels stream their
// first weight tiles before that wait, hiding launch and tail latency between kernels.
// Works inside stream capture (programmatic graph edges). ATLAS_NO_PDL=1 turns it off.
#include <cuda_runtime_api.h>

namespace atlas::kernels {

/// Whether decode kernels are launched with PDL (process-wide; read once from ATLAS_NO_PDL).
bool pdl_enabled();
void set_pdl_enabled(bool on);

}  // namespace atlas::kernels
