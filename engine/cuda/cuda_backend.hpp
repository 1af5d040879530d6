#pragma once
// The CUDA backend (built when nvcc is found; ATLAS_HAVE_CUDA). bf16 weights, KV cache and
// matrix-product inputs with float32 accumulation; BackendOptions::fp32 keeps everything in
// float32 for parity tests. Every block kind runs on it (dense Llama/Qwen3 and the Qwen3-Next
// hybrid: gated_deltanet, gated_attention, moe). Decode runs by CUDA-graph replay unless a layer
// vetoes capture or BackendOptions::decode_graphs is false (ATLAS_NO_DECODE_GRAPHS=1).
#include <cstdint>
#include <memory>

#include "engine/backend.hpp"
#include "engine/model.hpp"

namespace atlas::engine {

namespace cuda { class CudaDecoder; }

/// Creates the CUDA backend. A model whose weight spans are empty (a synthetic preset: config
/// only) gets the preset's synthetic weights for model.source.seed generated on the device, the
/// values make-model writes for that preset and seed (engine/formats/synthetic_weights.hpp), so
/// 8B-sized presets need no host-side generation. Throws EngineError without a CUDA device.
std::unique_ptr<Backend> make_cuda_backend(const Model& model, const BackendOptions& opts);

/// The decoder behind a backend made by make_cuda_backend (counters, memory plan, graph info for
/// the decode-anatomy suite); null for any other backend.
cuda::CudaDecoder* cuda_decoder_of(Backend& backend);

}  // namespace atlas::engine
