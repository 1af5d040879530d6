#pragma once
// The CUDA forward pass: prefill through cuBLAS GEMMs and a fused causal (flash) attention,
// decode through the kernels/ GEMVs and split-K attention, captured once per context-length
// bucket as a CUDA graph and replayed per token.
//
// Per decode token in graph mode the host does: write {token, pos, sampling} into a pinned staging
// buffer, one cudaGraphLaunch (the graph holds the H2D copy of that buffer, every kernel, and
// the D2H copy of the token chosen on the device), one stream synchronisation, read the pinned
// token.
// The eager path enqueues exactly the same operations, so both give bit-identical results.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/backend.hpp"
#include "engine/cuda/cuda_weights.hpp"
#include "engine/cuda/device_memory.hpp"
#include "engine/model.hpp"
#include "kernels/elementwise.hpp"
#include "engine/stage.hpp"

namespace atlas::engine::cuda {

struct DecoderOptions {
  kernels::DType wtype = kernels::DType::bf16;
  int max_seq = 0;            ///< KV capacity (tokens)
  bool graphs = true;         ///< capture/replay decode steps
  int veto_layer = -1;        ///< test hook (ATLAS_CUDA_VETO_LAYER): this layer refuses capture
  /// Most prompt tokens per prefill pass (longer prompts run in chunks). 0: 4096 with the flash
  /// attention kernel (one pass keeps the GEMMs large), 1024 with materialised scores.
  int max_prefill_chunk = 0;
};

/// How the device picks the next token: greedy (temperature 0) or a temperature draw by the
/// Gumbel-max trick (kernels::sample_token). `seed` must be fresh for every draw.
struct DeviceSample {
  float temperature = 0.0f;
  std::uint64_t seed = 0;
};

/// Host-side tallies of what the decoder asked of the driver (CUPTI measures the same
/// independently in the decode-anatomy suite).
struct DecodeCounters {
  std::int64_t decode_steps = 0;
  std::int64_t graph_steps = 0;      ///< decode steps run by graph replay
  std::int64_t eager_steps = 0;
  std::int64_t graph_launches = 0;
  std::int64_t graph_captures = 0;   ///< (re-)captures: one per context-length bucket met
  std::int64_t kernel_launches = 0;  ///< kernels launched from the host (eager and prefill)
  std::int64_t host_syncs = 0;
  std::int64_t h2d_copies = 0, d2h_copies = 0;  ///< host-issued or replayed copies
  std::int64_t h2d_bytes = 0, d2h_bytes = 0;
  std::int64_t prefill_calls = 0, prefill_tokens = 0;
};

/// The memory plan, fixed at load.
struct MemoryPlan {
  std::size_t weights = 0, kv_cache = 0, decode_workspace = 0, prefill_workspace = 0, total = 0;
  int prefill_chunk = 0;  ///< most prompt tokens one prefill pass takes
};

/// One layer's say on decode capture (every layer here reads position, KV length and token id
/// from device memory, so none needs the host inside a step; the hook exists for tests).
struct DecodeLayerPlan {
  int index = 0;
  bool forced_veto = false;
  /// A reason this layer cannot be captured, or nothing.
  std::optional<std::string> decode_graph_unsupported() const;
};

/// A kernel node of a captured decode graph and the stage it belongs to (recorded at capture
/// time, for tracers that attribute graph kernels by node id).
struct GraphKernelNode {
  cudaGraphNode_t node = nullptr;  ///< in the captured cudaGraph_t (not the executable's clone)
  Stage stage = Stage::embed;
};

class CudaDecoder {
 public:
  /// Weights from a host model (uploaded and converted), or, when `model.weights` is empty,
  /// synthetic weights generated on the device from `seed`.
  CudaDecoder(const Model& model, const DecoderOptions& opts, std::uint64_t seed = 0);
  ~CudaDecoder();
  CudaDecoder(const CudaDecoder&) = delete;
  CudaDecoder& operator=(const CudaDecoder&) = delete;

  /// Runs `tokens` at positions [pos, pos + n), writes their K/V, and returns the next token
  /// chosen on the device: greedy (argmax) or, with sample.temperature > 0, drawn from
  /// softmax(logits / T). With want_logits, logits() then holds the last position's.
  /// Throws EngineError for positions past the KV cache, bad token ids or a bad temperature.
  int run(std::span<const int> tokens, int pos, bool want_logits, DeviceSample sample = {});
  std::span<const float> logits() const;

  const ModelConfig& config() const { return w_.config; }
  int max_seq() const { return opts_.max_seq; }
  bool graphs_enabled() const { return opts_.graphs && vetoes().empty(); }
  /// Switches decode between graph replay and eager launches (same kernels either way).
  void set_graphs(bool on) { opts_.graphs = on; }
  /// Called with true before and false after each decode step (after its host sync): lets a
  /// tracer cut its trace into per-token windows. Empty function: none.
  void set_step_observer(std::function<void(bool)> observer) { observer_ = std::move(observer); }
  std::vector<GraphVeto> vetoes() const;
  const DecodeCounters& counters() const { return counters_; }
  void reset_counters() { counters_ = {}; }
  const MemoryPlan& memory_plan() const { return plan_; }
  /// Stage of each kernel of a decode step, in launch order (graph and eager alike).
  const std::vector<Stage>& step_kernel_stages() const { return step_stages_; }
  /// Bytes a decode step must read at KV length `kv_len`: weights (embedding row excepted) + K/V.
  std::size_t bytes_per_token(int kv_len) const;
  /// Context bucket (graph key) of a KV length: 256, 512, 1024, ...
  static int bucket_for(int kv_len);
  /// Attention key slices per head in a bucket (fixed within a captured graph).
  int splits_for(int bucket) const;
  cudaStream_t stream() const { return stream_; }
  /// Kernel nodes of every captured decode graph with their stages, in capture order.
  std::vector<GraphKernelNode> graph_kernel_nodes() const;
  /// Instantiates every captured graph again (same nodes, new executables). A tracer that maps
  /// an executable's node clones back to the captured nodes calls this after it subscribes.
  void reinstantiate_graphs();

 private:
  struct Step {
    int token;
    int pos;
    kernels::DeviceSampling sampling;
  };
  struct Captured {
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    std::vector<GraphKernelNode> kernels;
  };

  void layout(const ModelConfig& c, Arena& arena);
  int decode(int token, int pos, bool want_logits);
  void prefill(std::span<const int> tokens, int pos, bool want_logits);
  /// Enqueues one decode step; while capturing (not eager) returns its kernel nodes and stages.
  std::vector<GraphKernelNode> enqueue_step(int bucket, bool eager);
  void instantiate(Captured& cap);
  void gemm(const void* w, int rows, int k, int ldw, const void* x, int ldx, int n, void* y, int ldy,
            bool y_is_weight_type, float beta);
  void sync();

  DecoderOptions opts_;
  DeviceWeights w_;
  MemoryPlan plan_;
  std::unique_ptr<Arena> arena_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  std::vector<DecodeLayerPlan> layer_plans_;

  // KV cache, per layer K and V [n_kv][max_seq][head_dim].
  std::vector<void*> k_cache_, v_cache_;
  // Decode workspace.
  float* x_ = nullptr;        // [dim] residual stream
  float* qkv_ = nullptr;      // [q_dim + 2 kv_dim]
  void* attn_ = nullptr;      // [ld_q] weight type
  void* hb_ = nullptr;        // [ld_hidden] weight type
  float* logits_d_ = nullptr; // [vocab]
  float* part_o_ = nullptr;
  float* part_ml_ = nullptr;
  int* tickets_ = nullptr;
  float* rope_cs_ = nullptr;  ///< the decode step's RoPE (cos, sin) table, written by the embedding kernel
  void* argmax_scratch_ = nullptr;
  Step* step_d_ = nullptr;
  int* token_out_d_ = nullptr;
  // Prefill workspace.
  bool flash_prefill_ = false;  ///< fused attention kernel (no score matrices below)
  int prefill_chunk_ = 0;
  int* tokens_d_ = nullptr;
  float* px_ = nullptr;       // [chunk][dim]
  void* pxb_ = nullptr;       // [chunk][max(ld_dim, ld_q, ld_hidden)] weight type
  float* pqkv_ = nullptr;     // [chunk][qkv_dim]; also reused as gate/up [chunk][2 hidden]
  void* pq_ = nullptr;        // [n_heads][chunk][d]
  float* ps_ = nullptr;       // [n_heads][chunk][ld_keys] (cuBLAS attention path only)
  void* pp_ = nullptr;        // same, weight type
  void* po_ = nullptr;        // [n_heads][chunk][d]
  void* cublas_ws_ = nullptr;
  std::size_t cublas_ws_bytes_ = 0;
  // Pinned host buffers.
  PinnedBuffer step_h_, token_h_, logits_h_, tokens_h_;

  std::map<int, Captured> graphs_;
  std::vector<Stage> step_stages_;
  DecodeCounters counters_;
  std::function<void(bool)> observer_;
};

}  // namespace atlas::engine::cuda
