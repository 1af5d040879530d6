#pragma once
// The CUDA backend as blocks (the shape of the CPU backend, engine/cpu/blocks.hpp): a model is
// a head (embedding, final norm, lm_head, sampling) and one mixer and one ffn per layer. Each
// kind owns its device weights, its per-sequence device state (KV cache; conv + float32
// recurrent state), the kernels of its stages, and its answer to "can a decode step that runs
// me be captured". The decoder walks the blocks; no stage switches on the layer kind.
//
// Every block reads the residual stream x (float32 [dim]) and adds its output into it; its input
// RMSNorm is its own (fused into its first kernel where the kernels allow).
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/cuda/device_memory.hpp"
#include "engine/cuda/launch_tape.hpp"
#include "engine/cuda/weight_upload.hpp"
#include "engine/model.hpp"
#include "kernels/dtype.hpp"

namespace atlas::engine::cuda {

/// Device memory of a recurrent state (nullptr / 0 for blocks without one).
struct DeviceState {
  void* ptr = nullptr;
  std::size_t bytes = 0;
};

/// What a decode step gives every block. The step's token and position are device memory
/// (written by the step's one H2D copy), so a captured graph serves every step of its bucket.
struct StepContext {
  LaunchTape& tape;
  const ModelConfig& config;
  kernels::DType wtype;
  int max_seq = 0;          ///< KV capacity
  float* x = nullptr;       ///< float32 [dim] residual stream
  const int* pos = nullptr; ///< device: the new token's position (KV length pos + 1)
  const float* rope_cs = nullptr;  ///< device (cos, sin) table of the step (full-head RoPE only)
  int bucket = 0;           ///< context bucket of this step's graph (attention split count)
};

/// What one prefill chunk (tokens at positions [pos0, pos0 + n)) gives every block.
struct PrefillContext {
  LaunchTape& tape;
  const ModelConfig& config;
  kernels::DType wtype;
  int max_seq = 0;
  cublasHandle_t cublas = nullptr;
  int n = 0, pos0 = 0;
  float* x = nullptr;       ///< float32 [n][dim] residual stream
  void* xb = nullptr;       ///< weight type [n][ld_wide] scratch (normed inputs, activations)
  float* f = nullptr;       ///< float32 [n][f_cols] scratch (projections)
  void* q = nullptr;        ///< weight type [n][n_heads * head_dim] (attention's rotated q)
  float* scores = nullptr;  ///< float32 [n_heads][n][ld_keys] (cuBLAS attention path), or null
  void* probs = nullptr;    ///< weight type, same shape as scores, or null
  void* o = nullptr;        ///< weight type [n_heads][n][head_dim], or null
  bool flash = false;       ///< the fused flash attention kernel runs prefill attention
};

/// A memory plan's three sections; every block takes its share of each.
struct Arenas {
  Arena& weights;
  Arena& state;
  Arena& workspace;
};

class DeviceBlock {
 public:
  virtual ~DeviceBlock() = default;
  /// The kind's name ("attention", "gated_attention", "gated_deltanet", "swiglu", "moe", "head").
  virtual const char* kind() const = 0;
  /// Takes its weights, state and decode workspace from the arenas (counting arenas on the
  /// planning pass, where every pointer is null).
  virtual void layout(Arenas& a) = 0;
  /// Fills its weights from a host model's layer (throws EngineError naming a tensor of the
  /// wrong size).
  virtual void upload(const ModelWeights& w, Uploader& up) = 0;
  /// Fills its weights with synthetic values (the order of its RandomFill calls is fixed).
  virtual void randomize(RandomFill& fill) = 0;
  /// Sets kernel attributes once, before any capture (not stream operations); `max_bucket` is
  /// the largest context bucket a step can have.
  virtual void prepare(int /*max_bucket*/) {}
  /// Enqueues its part of a decode step.
  virtual void decode(StepContext& ctx) = 0;
  /// Whether prefill() runs a chunk of tokens at once (else the decoder runs a prompt through
  /// decode steps, token by token, for models with such a block).
  virtual bool has_chunked_prefill() const { return false; }
  virtual void prefill(PrefillContext&) {}
  /// Columns per prompt token of the decoder's shared prefill scratch that prefill() uses:
  /// float32 (PrefillContext::f) and weight type (PrefillContext::xb); the decoder sizes the
  /// scratch for the widest block (0: none beyond the dense layer's).
  virtual int prefill_f_cols() const { return 0; }
  virtual int prefill_xb_cols() const { return 0; }
  /// The stages it reports, in order: those of its decode kernels and those fused into them
  /// (e.g. attn_norm in the q/k/v GEMV's prologue), which report zero time and launches.
  virtual std::vector<Stage> stages() const = 0;
  /// Why a decode step that runs this block cannot be captured, or nothing.
  virtual std::optional<std::string> capture_veto() const { return std::nullopt; }
  /// Recurrent state that a KV-cache prefix cannot recompute (Gated DeltaNet), else empty.
  virtual DeviceState recurrent_state() const { return {}; }
  /// Device: the running hash of the experts this block chose (moe), else null.
  virtual const unsigned long long* routing_hash() const { return nullptr; }
  /// Chooses the block's experts on the host (true) or the device (false) from the next step
  /// on; false, changing nothing, for a block that routes nothing (every kind but moe).
  virtual bool set_host_routing(bool on) { (void)on; return false; }
  /// Bytes a decode step reads from this block's weights and state at KV length kv_len
  /// (MoE: only the selected and shared experts), for the roofline.
  virtual std::size_t bytes_per_token(int kv_len) const = 0;
  /// Bytes of its weights on the device.
  virtual std::size_t weight_bytes() const = 0;
};

/// The longest context the model's decode attention kernels take on this device (its split-K
/// kernel keeps a slice's scores in shared memory: Qwen3-Next's 8-head GQA groups in bf16 fit
/// 131,072 positions on an H200); 2^30 when no bound applies.
int attention_max_context(const ModelConfig& c, kernels::DType wt);

/// Blocks of layer `layer` of config `c` for weight type `wt` (the kind from c.block(layer)).
/// `veto` forces a capture veto (test hook).
std::unique_ptr<DeviceBlock> make_device_mixer(const ModelConfig& c, int layer, kernels::DType wt, bool veto, int max_seq);
/// `moe_host_routing`: moe blocks choose their experts on the host (ATLAS_MOE_HOST_ROUTING, the
/// investigation's pattern: a D2H copy of the router logits and a stream sync per layer, the
/// choice uploaded back), which vetoes capture.
std::unique_ptr<DeviceBlock> make_device_ffn(const ModelConfig& c, int layer, kernels::DType wt, bool moe_host_routing = false);

}  // namespace atlas::engine::cuda
