#include "engine/cuda/cuda_decoder.hpp"

#include <cuda_profiler_api.h>
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/env_flag.hpp"
#include "common/machine_error.hpp"
#include "engine/cuda/blocks/block_util.hpp"
#include "engine/error.hpp"
#include "engine/no_device_message.hpp"
#include "kernels/flash_prefill.hpp"
#include "kernels/gemv.hpp"

namespace atlas::engine::cuda {

using kernels::ElemType;
using kernels::padded_ld;

namespace {

/// An NVTX range around a whole decode step or prefill chunk.
class Range {
 public:
  explicit Range(const char* name) { nvtxRangePushA(name); }
  ~Range() { nvtxRangePop(); }
  Range(const Range&) = delete;
  Range& operator=(const Range&) = delete;
};

/// What is missing when no device can be used, from cudaGetDeviceCount's answer and the
/// versions cudart reports (the sentence itself: engine/no_device_message.hpp).
std::string no_device_message(cudaError_t e) {
  DeviceProbe p;
  cudaDriverGetVersion(&p.driver_version);
  cudaRuntimeGetVersion(&p.runtime_version);
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) p.visible_devices = visible;
  if (e == cudaErrorInsufficientDriver) {
    p.answer = DeviceProbe::Answer::insufficient_driver;
  } else if (e == cudaErrorNoDevice || e == cudaSuccess) {
    p.answer = DeviceProbe::Answer::no_device;
  } else {
    p.answer = DeviceProbe::Answer::other;
    p.error_name = cudaGetErrorName(e);
    p.error_text = cudaGetErrorString(e);
  }
  return engine::no_device_message(p);
}

std::string gib(std::size_t bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return b;
}

/// The widest input row any decode GEMV of the model reads (its dynamic shared memory).
int widest_gemv_input(const ModelConfig& c) {
  int ld = std::max({padded_ld(c.dim), padded_ld(c.q_dim()), padded_ld(c.hidden_dim)});
  if (c.gdn_v_heads > 0) ld = std::max(ld, padded_ld(c.gdn_value_dim()));
  if (c.expert_hidden_dim > 0) ld = std::max(ld, padded_ld(c.expert_hidden_dim));
  if (c.shared_expert_hidden_dim > 0) ld = std::max(ld, padded_ld(c.shared_expert_hidden_dim));
  return ld;
}

}  // namespace

int CudaDecoder::bucket_for(int kv_len) {
  int b = 256;
  while (b < kv_len) b *= 2;
  return b;
}

std::string no_usable_device_reason() {
  int dev_count = 0;
  const cudaError_t e = cudaGetDeviceCount(&dev_count);
  return e != cudaSuccess || dev_count == 0 ? no_device_message(e) : std::string();
}

CudaDecoder::CudaDecoder(const Model& model, const DecoderOptions& opts, std::uint64_t seed)
    : opts_(opts), config_(model.config) {
  const ModelConfig& c = config_;
  // The machine's failure, not the input's (exit 4): the same command runs on a GPU machine.
  if (std::string why = no_usable_device_reason(); !why.empty()) throw MachineError(why);
  if (opts_.max_seq <= 0) {
    // The model's context length, within what the decode kernels take (a caller who asks for
    // more gets the attention block's error naming the bound).
    opts_.max_seq = c.max_seq_len;
    for (int l = 0; l < c.n_layers; ++l)
      if (c.block(l).mixer != MixerKind::gated_deltanet) {
        opts_.max_seq = std::min(opts_.max_seq, attention_max_context(c, opts_.wtype));
        break;
      }
  }
  if (opts_.max_seq <= 0) throw EngineError("cuda backend: max_seq_len must be > 0");
  for (int l = 0; l < c.n_layers; ++l)
    if (c.block(l).mixer != MixerKind::gated_deltanet) {
      // Before any allocation: a context the decode attention kernel cannot take (its slice's
      // scores in shared memory) is refused naming the bound.
      const int bound = attention_max_context(c, opts_.wtype);
      if (opts_.max_seq > bound)
        throw EngineError("cuda backend: max_seq_len " + std::to_string(opts_.max_seq) + " is above " + std::to_string(bound) +
                          ", the longest context this model's decode attention takes on this device (its split-K kernel "
                          "keeps a slice's scores in shared memory); pass --max-seq-len " + std::to_string(bound) + " or less");
      break;
    }
  // bucket_for doubles an int from 256 up to max_seq: beyond 2^30 it overflowed (a model file
  // claiming context_length 2^31 - 1 whose small KV cache fits on an H200 would spin there).
  if (opts_.max_seq > (1 << 30))
    throw EngineError("cuda backend: max_seq_len " + std::to_string(opts_.max_seq) + " is above 2^30; pass a smaller --max-seq-len");
  bool any_attention = false;
  for (int l = 0; l < c.n_layers; ++l) any_attention |= c.block(l).mixer != MixerKind::gated_deltanet;
  if (any_attention) {
    if (c.n_kv_heads <= 0 || c.n_heads % c.n_kv_heads != 0 || c.n_heads / c.n_kv_heads > 8)
      throw EngineError("cuda backend: n_heads/n_kv_heads must be an integer <= 8, got " + std::to_string(c.n_heads) +
                        "/" + std::to_string(c.n_kv_heads));
    if (c.head_dim % 8 != 0 || c.head_dim > 512)
      throw EngineError("cuda backend: head_dim must be a multiple of 8 and <= 512, got " + std::to_string(c.head_dim));
  }
  // Prefill attention: the fused flash kernel where it applies (bf16, d = 64/128), else scores
  // materialised through cuBLAS. ATLAS_PREFILL_ATTENTION=gemm forces the latter (A/B runs).
  flash_prefill_ = kernels::flash_attention_prefill_supported(opts_.wtype, c.head_dim) &&
                   env_choice("ATLAS_PREFILL_ATTENTION", {"gemm", "flash"}) != "gemm";
  head_ = std::make_unique<DeviceHead>(config_, opts_.wtype);
  chunked_prefill_ = opts_.chunked_prefill;
  for (int l = 0; l < c.n_layers; ++l) {
    mixers_.push_back(make_device_mixer(config_, l, opts_.wtype, l == opts_.veto_layer, opts_.max_seq));
    ffns_.push_back(make_device_ffn(config_, l, opts_.wtype, opts_.moe_host_routing));
    chunked_prefill_ = chunked_prefill_ && mixers_.back()->has_chunked_prefill() && ffns_.back()->has_chunked_prefill();
    if (mixers_.back()->recurrent_state().bytes > 0)
      recurrent_.push_back(mixers_.back().get());
  }
  {  // Plan: a counting pass sums every slice; then one allocation per section holds them all.
    Arena w, s, p;
    Arenas counting{w, s, p};
    layout(counting);
    std::size_t free_b = 0, total_b = 0;
    ATLAS_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    const std::size_t need = w.used() + s.used() + p.used();
    // Out of device memory is the machine's limit (exit 4), though a smaller context may fit.
    if (need > free_b)
      throw MachineError("cuda backend: model '" + c.name + "' needs " + gib(need) + " of device memory (weights " +
                        gib(w.used()) + ", KV cache and recurrent state " + gib(s.used()) + ", workspace " + gib(p.used()) +
                        " at max_seq_len " + std::to_string(opts_.max_seq) + "); the GPU has " + gib(free_b) + " free of " +
                        gib(total_b) + " (a smaller --max-seq-len shrinks the KV cache only)");
    weights_ = std::make_unique<Arena>(w.used());
    state_ = std::make_unique<Arena>(s.used());
    workspace_ = std::make_unique<Arena>(p.used());
    Arenas real{*weights_, *state_, *workspace_};
    layout(real);
  }
  // Zero the state (a sequence starts from an empty KV cache and zero recurrent states) and the
  // workspace (padding of weight-type activations must stay zero, tickets start at 0).
  if (state_->used() > 0) ATLAS_CUDA_CHECK(cudaMemset(state_->base(), 0, state_->used()));
  if (workspace_->used() > 0) ATLAS_CUDA_CHECK(cudaMemset(workspace_->base(), 0, workspace_->used()));

  // One upload walk for both sources: a synthetic preset (no host weights) walks an empty
  // ModelWeights of the model's shape and the uploader draws each tensor by name, the values
  // make-model writes for this preset and seed (engine/formats/synthetic_weights.hpp).
  const bool from_host = !model.weights.layers.empty();
  if (from_host && model.weights.layers.size() != static_cast<std::size_t>(c.n_layers))
    throw EngineError("cuda upload: model has " + std::to_string(model.weights.layers.size()) + " layers, config says " +
                      std::to_string(c.n_layers));
  ModelWeights shape_only;
  if (!from_host) {
    shape_only.layers.resize(static_cast<std::size_t>(c.n_layers));
    for (LayerWeights& l : shape_only.layers) {
      const std::size_t e = static_cast<std::size_t>(std::max(c.n_experts, 0));
      l.moe.gate_exps.resize(e);
      l.moe.up_exps.resize(e);
      l.moe.down_exps.resize(e);
    }
  }
  Uploader up = from_host ? Uploader(opts_.wtype) : Uploader(opts_.wtype, synthetic_tensors(c, seed));
  const ModelWeights& source = from_host ? model.weights : shape_only;
  head_->upload(source, up);
  for (int l = 0; l < c.n_layers; ++l) {
    mixers_[static_cast<std::size_t>(l)]->upload(source, up);
    ffns_[static_cast<std::size_t>(l)]->upload(source, up);
  }
  weight_tensors_ = up.written();
  ATLAS_CUDA_CHECK(cudaDeviceSynchronize());

  stream_.create();
  for (CudaEvent& e : chunk_done_) e.create();
  wait_ = std::make_unique<HostWait>(opts_.sync_mode);
  cublas_.create();
  ATLAS_CUBLAS_CHECK(cublasSetStream(cublas_, stream_));
  ATLAS_CUBLAS_CHECK(cublasSetWorkspace(cublas_, cublas_ws_, cublas_ws_bytes_));
  ATLAS_CUBLAS_CHECK(cublasSetMathMode(cublas_, opts_.wtype == ElemType::f32 ? CUBLAS_PEDANTIC_MATH : CUBLAS_DEFAULT_MATH));

  // Kernel attributes before any capture (not stream operations).
  kernels::gemv_prepare(widest_gemv_input(c));
  if (flash_prefill_) kernels::flash_attention_prefill_prepare();
  const int max_bucket = bucket_for(opts_.max_seq);
  for (auto& b : mixers_) b->prepare(max_bucket);
  for (auto& b : ffns_) b->prepare(max_bucket);

  step_h_ = PinnedBuffer(sizeof(Step));
  token_h_ = PinnedBuffer(sizeof(kernels::StepLogprobs));
  logits_h_ = PinnedBuffer(sizeof(float) * c.vocab_size);
  // The whole prompt: each chunk's H2D copy reads its own region, so the next chunk's staging
  // cannot overwrite ids a pending copy has not read yet.
  tokens_h_ = PinnedBuffer(sizeof(int) * opts_.max_seq);
  vetoed_ = !vetoes().empty();
  ATLAS_CUDA_CHECK(cudaDeviceSynchronize());
}

CudaDecoder::~CudaDecoder() = default;

void CudaDecoder::layout(Arenas& a) {
  const ModelConfig& c = config_;
  const std::size_t es = kernels::elem_size(opts_.wtype);
  head_->layout(a);
  for (int l = 0; l < c.n_layers; ++l) {
    mixers_[static_cast<std::size_t>(l)]->layout(a);
    ffns_[static_cast<std::size_t>(l)]->layout(a);
  }
  plan_.weights = a.weights.used();
  plan_.kv_cache = a.state.used();
  x_ = take<float>(a.workspace, c.dim);
  step_d_ = take<Step>(a.workspace, 1);
  step_out_d_ = take<kernels::StepLogprobs>(a.workspace, 1);
  plan_.decode_workspace = a.workspace.used();

  // Prefill chunk: bounded so the score matrices [n_heads][chunk][max_seq] stay within ~4 GiB,
  // and at most 1024 tokens: chunks make the materialised causal scores roughly triangular
  // (chunk c sees (c+1) * chunk keys), which cuts attention's memory traffic by about a third
  // at 4096 tokens while the projection GEMMs stay large enough to run near peak.
  // The flash kernel keeps scores on chip: no score workspace, the chunk is only capped.
  // Models whose prompts run as decode steps need none of it.
  if (chunked_prefill_) {
    const std::size_t ld_keys = padded_ld(opts_.max_seq);
    const std::size_t per_row_scores = static_cast<std::size_t>(c.n_heads) * ld_keys * (sizeof(float) + es);
    const std::size_t budget = std::size_t{4} << 30;
    const int cap = opts_.max_prefill_chunk > 0 ? opts_.max_prefill_chunk : (flash_prefill_ ? 4096 : 1024);
    prefill_chunk_ = flash_prefill_ ? cap : static_cast<int>(std::clamp<std::size_t>(budget / per_row_scores, 16, cap));
    prefill_chunk_ = std::min(prefill_chunk_, opts_.max_seq);
    const std::size_t P = prefill_chunk_;
    int ld_wide = std::max({padded_ld(c.dim), padded_ld(c.q_dim()), padded_ld(c.hidden_dim)});
    int f_cols = std::max(c.q_dim() + 2 * c.kv_dim(), 2 * c.hidden_dim);
    for (int l = 0; l < c.n_layers; ++l)
      for (const DeviceBlock* b : {mixers_[static_cast<std::size_t>(l)].get(), ffns_[static_cast<std::size_t>(l)].get()}) {
        ld_wide = std::max(ld_wide, b->prefill_xb_cols());
        f_cols = std::max(f_cols, b->prefill_f_cols());
      }
    tokens_d_ = take<int>(a.workspace, P);
    px_ = take<float>(a.workspace, P * c.dim);
    pxb_ = take(a.workspace, opts_.wtype, P * ld_wide);
    pf_ = take<float>(a.workspace, P * f_cols);
    pq_ = take(a.workspace, opts_.wtype, P * c.n_heads * c.head_dim);
    if (!flash_prefill_) {
      ps_ = take<float>(a.workspace, P * c.n_heads * ld_keys);
      pp_ = take(a.workspace, opts_.wtype, P * c.n_heads * ld_keys);
      po_ = take(a.workspace, opts_.wtype, P * c.n_heads * c.head_dim);
    }
  } else {
    prefill_chunk_ = 1;  // one token per step
  }
  cublas_ws_bytes_ = std::size_t{32} << 20;
  cublas_ws_ = a.workspace.take(cublas_ws_bytes_);
  plan_.prefill_workspace = a.workspace.used() - plan_.decode_workspace;
  plan_.total = plan_.weights + plan_.kv_cache + a.workspace.used();
  plan_.prefill_chunk = prefill_chunk_;
}

std::size_t CudaDecoder::bytes_per_token(int kv_len) const {
  std::size_t b = head_->bytes_per_token();
  for (const auto& m : mixers_) b += m->bytes_per_token(kv_len);
  for (const auto& f : ffns_) b += f->bytes_per_token(kv_len);
  return b;
}

std::vector<Stage> CudaDecoder::stages() const {
  std::vector<Stage> out;
  auto add = [&](Stage s) {
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  };
  add(Stage::embed);
  for (int l = 0; l < config_.n_layers; ++l) {
    for (Stage s : mixers_[static_cast<std::size_t>(l)]->stages()) add(s);
    for (Stage s : ffns_[static_cast<std::size_t>(l)]->stages()) add(s);
  }
  add(Stage::final_norm);  // in the lm_head GEMV's prologue
  add(Stage::lm_head);
  add(Stage::sample);
  return out;
}

bool CudaDecoder::set_moe_host_routing(bool on) {
  bool any = false;
  for (auto& f : ffns_) any = f->set_host_routing(on) || any;
  if (any) opts_.moe_host_routing = on;
  vetoed_ = !vetoes().empty();
  return any;
}

std::vector<GraphVeto> CudaDecoder::vetoes() const {
  std::vector<GraphVeto> out;
  for (int l = 0; l < config_.n_layers; ++l) {
    for (const auto* b : {mixers_[static_cast<std::size_t>(l)].get(), ffns_[static_cast<std::size_t>(l)].get()})
      if (auto why = b->capture_veto()) out.push_back({"blk." + std::to_string(l) + "." + b->kind(), *why});
  }
  return out;
}

std::span<const float> CudaDecoder::logits() const {
  return {logits_h_.as<float>(), static_cast<std::size_t>(config_.vocab_size)};
}

void CudaDecoder::sync() {
  wait_->wait(stream_);
  ++counters_.host_syncs;
}

void CudaDecoder::resume_state_at(int pos) {
  if (recurrent_.empty()) return;
  switch (checkpoints_.resume_at(pos, "cuda")) {
    case DeviceCheckpoints::Resume::keep: break;
    case DeviceCheckpoints::Resume::reset:
      for (const DeviceBlock* b : recurrent_) {
        const DeviceState st = b->recurrent_state();
        ATLAS_CUDA_CHECK(cudaMemsetAsync(st.ptr, 0, st.bytes, stream_));
      }
      break;
    case DeviceCheckpoints::Resume::restore: {
      // Device to device, in stream order: no host sync, ~25 us for a 75 MB state on an H200.
      const DeviceBuffer& saved = checkpoints_.checkpoint(pos);
      std::size_t at = 0;
      for (const DeviceBlock* b : recurrent_) {
        const DeviceState st = b->recurrent_state();
        ATLAS_CUDA_CHECK(cudaMemcpyAsync(st.ptr, saved.as<char>() + at, st.bytes, cudaMemcpyDeviceToDevice, stream_));
        at += st.bytes;
      }
      break;
    }
  }
  checkpoints_.set_state_tokens(pos);
  for (auto& d : checkpoints_.drop_after(pos)) checkpoint_pool_.push_back(std::move(d));
}

void CudaDecoder::save_checkpoint() {
  if (recurrent_.empty() || checkpoints_.state_tokens() == 0) return;
  // A copy on the device, in stream order (the steps that follow change the state only after
  // it): saving was a pageable D2H copy and a host sync, ~50 ms per request on a 48-layer model.
  std::size_t total = 0;
  for (const DeviceBlock* b : recurrent_) total += b->recurrent_state().bytes;
  DeviceBuffer buf;
  if (!checkpoint_pool_.empty()) {
    buf = std::move(checkpoint_pool_.back());
    checkpoint_pool_.pop_back();
  } else {
    buf = DeviceBuffer(total);
  }
  std::size_t at = 0;
  for (const DeviceBlock* b : recurrent_) {
    const DeviceState st = b->recurrent_state();
    ATLAS_CUDA_CHECK(cudaMemcpyAsync(buf.as<char>() + at, st.ptr, st.bytes, cudaMemcpyDeviceToDevice, stream_));
    at += st.bytes;
  }
  for (auto& old : checkpoints_.save(std::move(buf))) checkpoint_pool_.push_back(std::move(old));
}

std::vector<std::byte> CudaDecoder::copy_recurrent_state() {
  std::size_t total = 0;
  for (const DeviceBlock* b : recurrent_) total += b->recurrent_state().bytes;
  std::vector<std::byte> copy(total);
  std::size_t at = 0;
  for (const DeviceBlock* b : recurrent_) {
    const DeviceState st = b->recurrent_state();
    ATLAS_CUDA_CHECK(cudaMemcpyAsync(copy.data() + at, st.ptr, st.bytes, cudaMemcpyDeviceToHost, stream_));
    at += st.bytes;
  }
  sync();
  return copy;
}

std::uint64_t CudaDecoder::routing_fingerprint() {
  ATLAS_CUDA_CHECK(cudaStreamSynchronize(stream_));
  std::uint64_t h = 0;
  for (const auto& f : ffns_) {
    const unsigned long long* d = f->routing_hash();
    if (d == nullptr) continue;
    unsigned long long v = 0;
    ATLAS_CUDA_CHECK(cudaMemcpy(&v, d, sizeof v, cudaMemcpyDeviceToHost));
    h = (h ^ v) * 0x100000001b3ull;
  }
  return h;
}

void CudaDecoder::reset_routing_fingerprint() {
  for (const auto& f : ffns_)
    if (const unsigned long long* d = f->routing_hash())
      ATLAS_CUDA_CHECK(cudaMemsetAsync(const_cast<unsigned long long*>(d), 0, sizeof *d, stream_));
  ATLAS_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

int CudaDecoder::run(std::span<const int> tokens, int pos, bool want_logits, DeviceSample sample) {
  const ModelConfig& c = config_;
  if (tokens.empty()) throw EngineError("cuda backend: forward() needs at least one token");
  if (pos < 0 || pos + static_cast<int>(tokens.size()) > opts_.max_seq)
    throw EngineError("cuda backend: positions [" + std::to_string(pos) + ", " +
                      std::to_string(pos + tokens.size()) + ") exceed the KV cache (max_seq_len " +
                      std::to_string(opts_.max_seq) + ")");
  for (int t : tokens)
    if (t < 0 || t >= c.vocab_size)
      throw EngineError("cuda backend: token id " + std::to_string(t) + " outside the vocabulary [0, " +
                        std::to_string(c.vocab_size) + ")");
  if (!(sample.temperature >= 0.0f) || !std::isfinite(sample.temperature))
    throw EngineError("cuda backend: sampling temperature " + std::to_string(sample.temperature) + " is invalid");
  resume_state_at(pos);
  kernels::DeviceSampling& ds = step_h_.as<Step>()->sampling;
  ds.temperature = sample.temperature;
  ds.seed = sample.seed;
  int next = 0;
  try {
    if (tokens.size() == 1) {
      next = decode(tokens[0], pos, want_logits, false, sample.logprobs);
    } else {
      prefill(tokens, pos, want_logits, sample.logprobs);
      next = *token_h_.as<int>();
    }
  } catch (...) {
    // Part of the tokens may have advanced the recurrent state: its length is unknown, so the
    // next run must start at 0 or at a checkpoint.
    checkpoints_.set_state_tokens(-1);
    throw;
  }
  checkpoints_.set_state_tokens(pos + static_cast<int>(tokens.size()));
  return next;
}

// ---------------------------------------------------------------------------------------------
// Decode

void CudaDecoder::enqueue_result_copy(LaunchTape& tape, bool logprobs) {
  if (logprobs) head_->logprobs(tape, step_out_d_);
  const std::size_t bytes = logprobs ? sizeof(kernels::StepLogprobs) : sizeof(int);
  ATLAS_CUDA_CHECK(cudaMemcpyAsync(token_h_.get(), step_out_d_, bytes, cudaMemcpyDeviceToHost, tape.stream()));
}

std::vector<GraphKernelNode> CudaDecoder::enqueue_step(int bucket, LaunchTape::Mode mode, bool logprobs) {
  LaunchTape tape(stream_, mode, &counters_, wait_.get());
  ATLAS_CUDA_CHECK(cudaMemcpyAsync(step_d_, step_h_.get(), sizeof(Step), cudaMemcpyHostToDevice, stream_));
  StepContext ctx{tape, config_, opts_.wtype, opts_.max_seq, x_, &step_d_->pos, head_->rope_table(), bucket};
  head_->embed(ctx, &step_d_->token);
  for (int l = 0; l < config_.n_layers; ++l) {
    mixers_[static_cast<std::size_t>(l)]->decode(ctx);
    ffns_[static_cast<std::size_t>(l)]->decode(ctx);
  }
  head_->logits_and_sample(tape, x_, &step_d_->sampling, &step_out_d_->token);
  enqueue_result_copy(tape, logprobs);
  step_stages_ = tape.take_stages();
  step_host_events_ = tape.take_host_events();
  return tape.take_nodes();
}

int CudaDecoder::decode(int token, int pos, bool want_logits, bool is_prefill, bool logprobs) {
  const bool observed = observer_ && !is_prefill;
  if (observed) observer_(true);
  Range step_range(is_prefill ? "prefill_step" : "decode_step");
  Step* st = step_h_.as<Step>();
  st->token = token;
  st->pos = pos;
  const int bucket = bucket_for(pos + 1);
  if (is_prefill) ++counters_.prefill_steps;
  else ++counters_.decode_steps;
  const bool profiled = !is_prefill && opts_.profile_step > 0 && counters_.decode_steps == opts_.profile_step;
  if (profiled) ATLAS_CUDA_CHECK(cudaProfilerStart());
  if (graphs_enabled()) {
    const std::int64_t before = graphs_.captures();
    // A step with log-probabilities has one more kernel and a longer copy: its own graph (key
    // bucket + 1: buckets are powers of two >= 256), so the steps without them (every
    // benchmark's) keep the graph and key they had.
    const int key = bucket + (logprobs ? 1 : 0);
    const cudaGraphExec_t exec =
        graphs_.get(key, stream_, [&] { return enqueue_step(bucket, LaunchTape::Mode::capture, logprobs); });
    counters_.graph_captures += graphs_.captures() - before;
    ATLAS_CUDA_CHECK(cudaGraphLaunch(exec, stream_));
    ++counters_.graph_launches;
    if (!is_prefill) ++counters_.graph_steps;
  } else {
    enqueue_step(bucket, LaunchTape::Mode::eager, logprobs);
    if (!is_prefill) ++counters_.eager_steps;
  }
  counters_.h2d_copies += 1;
  counters_.h2d_bytes += sizeof(Step);
  counters_.d2h_copies += 1;
  counters_.d2h_bytes += logprobs ? sizeof(kernels::StepLogprobs) : sizeof(int);
  if (want_logits) {
    ATLAS_CUDA_CHECK(cudaMemcpyAsync(logits_h_.get(), head_->logits(), sizeof(float) * config_.vocab_size,
                                     cudaMemcpyDeviceToHost, stream_));
    counters_.d2h_copies += 1;
    counters_.d2h_bytes += sizeof(float) * config_.vocab_size;
  }
  sync();
  if (profiled) ATLAS_CUDA_CHECK(cudaProfilerStop());
  if (observed) observer_(false);
  return *token_h_.as<int>();
}

// ---------------------------------------------------------------------------------------------
// Prefill

void CudaDecoder::prefill_by_steps(std::span<const int> tokens, int pos, bool want_logits, bool logprobs) {
  // DecoderOptions::chunked_prefill off, or a block without a chunked prefill (moe routing on
  // the host): the prompt runs as decode steps, each replaying the step graph of its bucket, one host sync each (the
  // pinned step buffer is rewritten for the next position). Equal to token-by-token decode by
  // construction.
  ++counters_.prefill_calls;
  counters_.prefill_tokens += static_cast<std::int64_t>(tokens.size());
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const bool last = i + 1 == tokens.size();
    decode(tokens[i], pos + static_cast<int>(i), want_logits && last, true, logprobs && last);
    // Each step already ended in a host sync: a stop costs no queued work.
    if (chunk_hook_) chunk_hook_(1, !last);
  }
}

void CudaDecoder::prefill(std::span<const int> tokens, int pos, bool want_logits, bool logprobs) {
  if (!chunked_prefill_) return prefill_by_steps(tokens, pos, want_logits, logprobs);
  const ModelConfig& c = config_;
  cudaStream_t s = stream_;
  ++counters_.prefill_calls;
  counters_.prefill_tokens += static_cast<std::int64_t>(tokens.size());
  // The sampling parameters the last position's draw reads (token/pos fields unused here).
  ATLAS_CUDA_CHECK(cudaMemcpyAsync(step_d_, step_h_.get(), sizeof(Step), cudaMemcpyHostToDevice, s));
  ++counters_.h2d_copies;
  counters_.h2d_bytes += sizeof(Step);

  LaunchTape tape(s, LaunchTape::Mode::eager, nullptr, wait_.get());
  int chunk = 0;
  for (std::size_t off = 0; off < tokens.size(); off += prefill_chunk_, ++chunk) {
    const int n = static_cast<int>(std::min<std::size_t>(prefill_chunk_, tokens.size() - off));
    const int p0 = pos + static_cast<int>(off);
    Range chunk_range("prefill");
    int* staged = tokens_h_.as<int>() + off;
    std::memcpy(staged, tokens.data() + off, sizeof(int) * n);
    ATLAS_CUDA_CHECK(cudaMemcpyAsync(tokens_d_, staged, sizeof(int) * n, cudaMemcpyHostToDevice, s));
    ++counters_.h2d_copies;
    counters_.h2d_bytes += sizeof(int) * n;
    head_->embed_rows(tape, tokens_d_, n, px_);
    PrefillContext ctx{tape, config_, opts_.wtype, opts_.max_seq, cublas_, n, p0, px_, pxb_, pf_, pq_, ps_, pp_, po_,
                       flash_prefill_};
    for (int l = 0; l < c.n_layers; ++l) {
      mixers_[static_cast<std::size_t>(l)]->prefill(ctx);
      ffns_[static_cast<std::size_t>(l)]->prefill(ctx);
    }
    const bool more = off + n < tokens.size();
    if (chunk_hook_) {
      if (more) {
        // Pacing: wait for the previous chunk, so the queue holds this one only when the hook
        // stops the prefill. The device stays busy (this chunk is queued behind the one waited on).
        ATLAS_CUDA_CHECK(cudaEventRecord(chunk_done_[chunk % 2], s));
        if (chunk > 0) {
          ATLAS_CUDA_CHECK(cudaEventSynchronize(chunk_done_[(chunk - 1) % 2]));
          ++counters_.host_syncs;
        }
      }
      try {
        chunk_hook_(n, more);
      } catch (...) {
        // Let the queued chunk finish before the caller reuses the pinned staging it reads.
        cudaStreamSynchronize(s);
        throw;
      }
    }
    if (more) continue;
    // Only the last position's logits are needed.
    head_->logits_and_sample(tape, px_ + static_cast<std::size_t>(n - 1) * c.dim, &step_d_->sampling, &step_out_d_->token);
  }
  enqueue_result_copy(tape, logprobs);
  ++counters_.d2h_copies;
  counters_.d2h_bytes += logprobs ? sizeof(kernels::StepLogprobs) : sizeof(int);
  if (want_logits) {
    ATLAS_CUDA_CHECK(cudaMemcpyAsync(logits_h_.get(), head_->logits(), sizeof(float) * c.vocab_size, cudaMemcpyDeviceToHost, s));
    ++counters_.d2h_copies;
    counters_.d2h_bytes += sizeof(float) * c.vocab_size;
  }
  sync();
}

}  // namespace atlas::engine::cuda
