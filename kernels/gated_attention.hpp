#pragma once
// The output gate of Qwen3-Next's gated attention (HF Qwen3NextAttention:
// attn_output * sigmoid(gate), gate from q_proj's second half per head).
#include <cuda_runtime_api.h>

#include "kernels/elem_type.hpp"

namespace atlas::kernels {

/// attn[i] (weight type) *= sigmoid(gate[i]) (float32), i < n. One launch.
void attention_output_gate(ElemType wtype, void* attn, const float* gate, int n, cudaStream_t stream);
/// The same for a prefill chunk: row t of attn (weight type, stride attn_ld) times sigmoid of
/// row t of gate (float32, stride gate_ld), `width` elements per row. One launch.
void attention_output_gate_rows(ElemType wtype, void* attn, int attn_ld, const float* gate, int gate_ld, int width,
                                int n_rows, cudaStream_t stream);

}  // namespace atlas::kernels
