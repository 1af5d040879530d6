#pragma once
// The CUDA forward pass, as blocks (engine/cuda/blocks/): a head and, per layer, a mixer and an
// ffn, each owning its weights, state and kernels. Prefill runs through cuBLAS GEMMs and a fused
// causal (flash) attention where every block has a chunked prefill (dense models), else as a
// sequence of decode steps. Decode runs the blocks' kernels, captured once per context-length
// bucket as a CUDA graph (engine/cuda/step_graphs.hpp) and replayed per token.
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
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/backend.hpp"
#include "engine/cuda/blocks/device_block.hpp"
#include "engine/cuda/blocks/head.hpp"
#include "engine/cuda/device_memory.hpp"
#include "engine/cuda/host_wait.hpp"
#include "engine/cuda/launch_tape.hpp"
#include "engine/cuda/step_graphs.hpp"
#include "engine/cuda/stream.hpp"
#include "engine/model.hpp"
#include "engine/recurrent_checkpoints.hpp"
#include "kernels/logprobs.hpp"
#include "kernels/sampling.hpp"
#include "engine/stage.hpp"

namespace atlas::engine::cuda {

struct DecoderOptions {
  kernels::ElemType wtype = kernels::ElemType::bf16;
  int max_seq = 0;            ///< KV capacity (tokens)
  bool graphs = true;         ///< capture/replay decode steps
  int veto_layer = -1;        ///< test hook (ATLAS_CUDA_VETO_LAYER): this layer refuses capture
  /// moe layers choose their experts on the host (ATLAS_MOE_HOST_ROUTING=1): one D2H copy and
  /// one host sync per moe layer per token, capture vetoed (the investigation's experiment).
  bool moe_host_routing = false;
  /// Most prompt tokens per prefill pass (longer prompts run in chunks). 0: 4096 with the flash
  /// attention kernel (one pass keeps the GEMMs large), 1024 with materialised scores.
  int max_prefill_chunk = 0;
  /// How the host waits for the device (host_wait.hpp; ATLAS_CUDA_SYNC=stream|spin|blocking).
  SyncMode sync_mode = SyncMode::stream;
  /// false: prompts run as decode steps (one graph replay and one host sync per token), the
  /// reference the chunked prefill is tested against and an A/B side.
  bool chunked_prefill = true;
  /// Decode step N (1-based, by the decoder's step counter: from load or the last
  /// reset_counters()) runs between cudaProfilerStart and
  /// cudaProfilerStop (ATLAS_CUDA_PROFILE_STEP=N), so `ncu --profile-from-start off` measures
  /// one step's kernels and nothing of the load (tools/gpu-ncu-bytes.sh). 0: off.
  int profile_step = 0;
};

/// How the device picks the next token: greedy (temperature 0) or a temperature draw by the
/// Gumbel-max trick (kernels::sample_token). `seed` must be fresh for every draw.
struct DeviceSample {
  float temperature = 0.0f;
  std::uint64_t seed = 0;
  /// Also compute the raw distribution's log-probabilities on the device (the chosen id's and
  /// the kernels::kMaxLogprobs most likely; last_logprobs()), copied back with the id in the
  /// step's one D2H copy. Steps with them run their own captured graph (one more kernel).
  bool logprobs = false;
};

/// The memory plan, fixed at load.
struct MemoryPlan {
  std::size_t weights = 0, kv_cache = 0, decode_workspace = 0, prefill_workspace = 0, total = 0;
  int prefill_chunk = 0;  ///< most prompt tokens one prefill pass takes
};

class CudaDecoder {
 public:
  /// Weights from a host model (uploaded and converted), or, when `model.weights` is empty,
  /// the config's synthetic weights for `seed` generated on the device: the values make-model
  /// writes for that preset and seed (engine/formats/synthetic_weights.hpp). Throws EngineError when the model's
  /// memory plan does not fit the device (naming the bytes needed and free) or no device exists.
  CudaDecoder(const Model& model, const DecoderOptions& opts, std::uint64_t seed = 0);
  ~CudaDecoder();
  CudaDecoder(const CudaDecoder&) = delete;
  CudaDecoder& operator=(const CudaDecoder&) = delete;

  /// Runs `tokens` at positions [pos, pos + n), writes their K/V (and advances recurrent
  /// states), and returns the next token chosen on the device: greedy (argmax) or, with
  /// sample.temperature > 0, drawn from softmax(logits / T). With want_logits, logits() then
  /// holds the last position's. Throws EngineError for positions past the KV cache, bad token
  /// ids, a bad temperature, or (hybrid models) a `pos` the recurrent state cannot resume from.
  int run(std::span<const int> tokens, int pos, bool want_logits, DeviceSample sample = {});
  std::span<const float> logits() const;
  /// The log-probabilities of the last run() that asked for them (DeviceSample::logprobs).
  const kernels::StepLogprobs& last_logprobs() const { return *token_h_.as<kernels::StepLogprobs>(); }
  /// Called after each prefill chunk is enqueued with (chunk tokens, whether chunks follow);
  /// may throw to stop the prefill there (a client that left). While one is set, the chunks
  /// are paced: before the hook runs for chunk k, the host waits for chunk k - 1 to finish, so
  /// a stop leaves at most one more chunk of device work queued (without it the host enqueues
  /// every chunk at once and a stop would save nothing). Empty: no hook, no pacing.
  void set_prefill_chunk_hook(std::function<void(int, bool)> hook) { chunk_hook_ = std::move(hook); }

  const ModelConfig& config() const { return config_; }
  int max_seq() const { return opts_.max_seq; }
  bool graphs_enabled() const { return opts_.graphs && !vetoed_; }
  /// Whether graphs were asked for (a veto can still keep steps eager).
  bool graphs_requested() const { return opts_.graphs; }
  /// Switches decode between graph replay and eager launches (same kernels either way).
  void set_graphs(bool on) { opts_.graphs = on; }
  /// Called with true before and false after each decode step (after its host sync): lets a
  /// tracer cut its trace into per-token windows. Empty function: none.
  void set_step_observer(std::function<void(bool)> observer) { observer_ = std::move(observer); }
  /// Switches every moe layer between choosing its experts on the device and on the host (the
  /// experiment ATLAS_MOE_HOST_ROUTING=1 starts in), for the steps that follow; host routing
  /// vetoes capture, so those steps run eagerly. Returns false, changing nothing, for a model
  /// without moe layers.
  bool set_moe_host_routing(bool on);
  bool moe_host_routing() const { return opts_.moe_host_routing; }
  /// How the host waits for the device from the next step on: at each step's end and at every
  /// mid-step sync a block asks for (host routing).
  void set_sync_mode(SyncMode m) {
    opts_.sync_mode = m;
    wait_->set_mode(m);
  }
  SyncMode sync_mode() const { return opts_.sync_mode; }
  /// Every block's capture veto, named "blk.<layer>.<kind>".
  std::vector<GraphVeto> vetoes() const;
  const DecodeCounters& counters() const { return counters_; }
  void reset_counters() { counters_ = {}; }
  const MemoryPlan& memory_plan() const { return plan_; }
  /// Stage of each kernel of a decode step, in launch order (graph and eager alike).
  const std::vector<Stage>& step_kernel_stages() const { return step_stages_; }
  /// The blocks' copies and syncs of the last decode step enqueued eagerly, in order (none in
  /// a captured step: a block that needs the host vetoes capture).
  const std::vector<HostEvent>& step_host_events() const { return step_host_events_; }
  /// The stages a decode step reports (taken from the blocks: a dense model's 12, a hybrid's
  /// mixer and ffn stages), fused ones included.
  std::vector<Stage> stages() const;
  /// Bytes a decode step must read at KV length `kv_len`: the dense weights (one embedding
  /// row), the router and only the selected and shared experts, recurrent states read and
  /// written, the K/V of the attention layers.
  std::size_t bytes_per_token(int kv_len) const;
  /// Context bucket (graph key) of a KV length: 256, 512, 1024, ...
  static int bucket_for(int kv_len);
  cudaStream_t stream() const { return stream_; }
  /// Kernel nodes of every captured decode graph with their stages, in capture order.
  std::vector<GraphKernelNode> graph_kernel_nodes() const { return graphs_.kernel_nodes(); }
  /// Host milliseconds spent capturing decode graphs so far.
  double graph_capture_ms() const { return graphs_.capture_ms(); }
  /// Instantiates every captured graph again (same nodes, new executables). A tracer that maps
  /// an executable's node clones back to the captured nodes calls this after it subscribes.
  void reinstantiate_graphs() { graphs_.reinstantiate(stream_); }

  /// A hash of every expert every moe layer chose since load or the last reset, layer by layer
  /// and step by step (0 for a model without moe layers): equal values mean identical routing.
  /// Waits for the stream.
  std::uint64_t routing_fingerprint();
  void reset_routing_fingerprint();
  /// Every weight tensor's device bytes hashed, in upload order, named as in
  /// engine/formats/synthetic_weights.hpp: two loads of the same weights (a file and its preset
  /// generated on the device) give equal lists. A device-to-host copy of all weights.
  std::vector<TensorDigest> weight_digests() const { return digest_tensors(weight_tensors_); }

  /// Hybrid models: see Backend::save_checkpoint / checkpoints.
  bool has_recurrent_state() const { return !recurrent_.empty(); }
  void save_checkpoint();
  std::vector<int> checkpoints() const { return checkpoints_.positions(); }
  /// Every recurrent block's state (conv window, then the float32 recurrent state), layer order,
  /// copied to the host: what a checkpoint holds. Waits for the stream.
  std::vector<std::byte> copy_recurrent_state();

 private:
  std::vector<DeviceTensor> weight_tensors_;
  struct Step {
    int token;
    int pos;
    kernels::DeviceSampling sampling;
  };

  void layout(Arenas& a);
  int decode(int token, int pos, bool want_logits, bool is_prefill, bool logprobs);
  void prefill(std::span<const int> tokens, int pos, bool want_logits, bool logprobs);
  void prefill_by_steps(std::span<const int> tokens, int pos, bool want_logits, bool logprobs);
  /// Enqueues one decode step; while capturing returns its kernel nodes and stages.
  std::vector<GraphKernelNode> enqueue_step(int bucket, LaunchTape::Mode mode, bool logprobs);
  /// The sampler's output and, with `logprobs`, the log-probabilities: one D2H copy.
  void enqueue_result_copy(LaunchTape& tape, bool logprobs);
  void resume_state_at(int pos);
  void sync();

  DecoderOptions opts_;
  ModelConfig config_;
  MemoryPlan plan_;
  std::unique_ptr<Arena> weights_, state_, workspace_;
  CudaStream stream_;
  CudaEvent chunk_done_[2];  ///< prefill pacing (set_prefill_chunk_hook): chunk k's end, k % 2
  std::unique_ptr<HostWait> wait_;  ///< made once the device is known to exist
  CublasHandle cublas_;  ///< destroyed before the stream it is set to
  std::unique_ptr<DeviceHead> head_;
  std::vector<std::unique_ptr<DeviceBlock>> mixers_, ffns_;  ///< [n_layers]
  std::vector<const DeviceBlock*> recurrent_;               ///< blocks with recurrent state
  /// Checkpoints as device buffers (at most 8, one state each), made at the first saves and
  /// reused after; not part of the memory plan.
  using DeviceCheckpoints = RecurrentCheckpointsOf<DeviceBuffer>;
  DeviceCheckpoints checkpoints_;
  std::vector<DeviceBuffer> checkpoint_pool_;  ///< evicted or dropped checkpoints, for reuse
  bool chunked_prefill_ = true;

  // Decode workspace.
  float* x_ = nullptr;        // [dim] residual stream
  Step* step_d_ = nullptr;
  kernels::StepLogprobs* step_out_d_ = nullptr;  ///< the sampler writes its ->token
  // Prefill workspace.
  bool flash_prefill_ = false;  ///< fused attention kernel (no score matrices below)
  int prefill_chunk_ = 0;
  int* tokens_d_ = nullptr;
  float* px_ = nullptr;       // [chunk][dim]
  void* pxb_ = nullptr;       // [chunk][max(ld_dim, ld_q, ld_hidden)] weight type
  float* pf_ = nullptr;       // [chunk][max(qkv_dim, 2 hidden)] float32 (or weight type)
  void* pq_ = nullptr;        // [n_heads][chunk][d]
  float* ps_ = nullptr;       // [n_heads][chunk][ld_keys] (cuBLAS attention path only)
  void* pp_ = nullptr;        // same, weight type
  void* po_ = nullptr;        // [n_heads][chunk][d]
  void* cublas_ws_ = nullptr;
  std::size_t cublas_ws_bytes_ = 0;
  // Pinned host buffers.
  PinnedBuffer step_h_, token_h_, logits_h_, tokens_h_;

  StepGraphs graphs_;
  std::vector<Stage> step_stages_;
  std::vector<HostEvent> step_host_events_;
  DecodeCounters counters_;
  std::function<void(bool)> observer_;
  std::function<void(int, bool)> chunk_hook_;
  /// Whether a block refuses capture: known at load and after set_moe_host_routing (the only
  /// switch of a block's veto), so a decode step asks a bool, not every block for a string.
  bool vetoed_ = false;
};

/// Empty when a CUDA device is usable; otherwise the sentence the decoder's MachineError carries,
/// saying what the machine lacks (no driver, an older driver, no visible device:
/// engine/no_device_message.hpp). The GPU tests skip with it.
std::string no_usable_device_reason();

}  // namespace atlas::engine::cuda
