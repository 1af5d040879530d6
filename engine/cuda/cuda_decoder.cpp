#include "engine/cuda/cuda_decoder.hpp"

#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "engine/error.hpp"
#include "kernels/attention.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/flash_prefill.hpp"
#include "kernels/gemv.hpp"

namespace atlas::engine::cuda {

using kernels::DType;
using kernels::padded_ld;

namespace {

#define ATLAS_CUBLAS_CHECK(expr)                                                                  \
  do {                                                                                            \
    const cublasStatus_t st_ = (expr);                                                            \
    if (st_ != CUBLAS_STATUS_SUCCESS)                                                             \
      throw kernels::KernelError(std::string(#expr) + " failed: " + cublasGetStatusName(st_));    \
  } while (0)

const char* nvtx_name(Stage s) {
  static const char* names[] = {"embed",     "attn_norm", "qkv",     "rope",        "attention",  "o_proj",
                                "ffn_norm",  "ffn_gate_up", "ffn_down", "final_norm", "lm_head",   "sample"};
  return names[static_cast<int>(s)];
}

/// An NVTX range, pushed only when `on` (eager steps and prefill; a replayed graph gets one
/// range per step from the caller).
class Range {
 public:
  Range(bool on, const char* name) : on_(on) { if (on_) nvtxRangePushA(name); }
  ~Range() { if (on_) nvtxRangePop(); }
  Range(const Range&) = delete;
  Range& operator=(const Range&) = delete;
 private:
  bool on_;
};

cudaDataType_t cuda_type(DType t) { return t == DType::bf16 ? CUDA_R_16BF : CUDA_R_32F; }

}  // namespace

std::optional<std::string> DecodeLayerPlan::decode_graph_unsupported() const {
  if (forced_veto) return std::string("capture refused by the ATLAS_CUDA_VETO_LAYER test hook");
  return std::nullopt;
}

int CudaDecoder::bucket_for(int kv_len) {
  int b = 256;
  while (b < kv_len) b *= 2;
  return b;
}

int CudaDecoder::splits_for(int bucket) const {
  const ModelConfig& c = w_.config;
  return kernels::attention_decode_splits(opts_.wtype, c.n_heads / c.n_kv_heads, c.head_dim, bucket);
}

CudaDecoder::CudaDecoder(const Model& model, const DecoderOptions& opts, std::uint64_t seed) : opts_(opts) {
  const ModelConfig& c = model.config;
  if (opts_.max_seq <= 0) opts_.max_seq = c.max_seq_len;
  if (opts_.max_seq <= 0) throw EngineError("cuda backend: max_seq_len must be > 0");
  // bucket_for doubles an int from 256 up to max_seq: beyond 2^30 it overflowed (a model file
  // claiming context_length 2^31 - 1 whose small KV cache fits on an H200 would spin there).
  if (opts_.max_seq > (1 << 30))
    throw EngineError("cuda backend: max_seq_len " + std::to_string(opts_.max_seq) + " is above 2^30; pass a smaller --max-seq-len");
  if (c.n_kv_heads <= 0 || c.n_heads % c.n_kv_heads != 0 || c.n_heads / c.n_kv_heads > 8)
    throw EngineError("cuda backend: n_heads/n_kv_heads must be an integer <= 8, got " + std::to_string(c.n_heads) +
                      "/" + std::to_string(c.n_kv_heads));
  if (c.head_dim % 8 != 0 || c.head_dim > 512)
    throw EngineError("cuda backend: head_dim must be a multiple of 8 and <= 512, got " + std::to_string(c.head_dim));
  int dev_count = 0;
  if (cudaGetDeviceCount(&dev_count) != cudaSuccess || dev_count == 0)
    throw EngineError("cuda backend: no CUDA device");

  // Prefill attention: the fused flash kernel where it applies (bf16, d = 64/128), else scores
  // materialised through cuBLAS. ATLAS_PREFILL_ATTENTION=gemm forces the latter (A/B runs).
  {
    const char* e = std::getenv("ATLAS_PREFILL_ATTENTION");
    flash_prefill_ = kernels::flash_attention_prefill_supported(opts_.wtype, c.head_dim) &&
                     !(e != nullptr && std::string(e) == "gemm");
  }
  {  // Plan: a counting pass sums every slice; then one allocation holds them all.
    Arena counting;
    layout(c, counting);
    arena_ = std::make_unique<Arena>(counting.used());
    layout(c, *arena_);
  }
  const bool from_host = !model.weights.layers.empty();
  if (from_host) upload_weights(model, w_);
  else random_weights(w_, seed);

  ATLAS_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  ATLAS_CUBLAS_CHECK(cublasCreate(&cublas_));
  ATLAS_CUBLAS_CHECK(cublasSetStream(cublas_, stream_));
  ATLAS_CUBLAS_CHECK(cublasSetWorkspace(cublas_, cublas_ws_, cublas_ws_bytes_));
  ATLAS_CUBLAS_CHECK(cublasSetMathMode(cublas_, opts_.wtype == DType::f32 ? CUBLAS_PEDANTIC_MATH : CUBLAS_DEFAULT_MATH));

  // Kernel attributes before any capture (not stream operations).
  kernels::gemv_prepare(std::max({w_.ld_dim, w_.ld_q, w_.ld_hidden}));
  if (flash_prefill_) kernels::flash_attention_prefill_prepare();
  const int max_bucket = bucket_for(opts_.max_seq);
  kernels::attention_decode_prepare(opts_.wtype, c.n_heads / c.n_kv_heads, c.head_dim,
                                    max_bucket / splits_for(max_bucket));

  step_h_ = PinnedBuffer(sizeof(Step));
  token_h_ = PinnedBuffer(sizeof(int));
  logits_h_ = PinnedBuffer(sizeof(float) * c.vocab_size);
  // The whole prompt: each chunk's H2D copy reads its own region, so the next chunk's staging
  // cannot overwrite ids a pending copy has not read yet.
  tokens_h_ = PinnedBuffer(sizeof(int) * opts_.max_seq);
  // Zero the workspace once: padding of weight-type activations must stay zero, tickets start at 0.
  ATLAS_CUDA_CHECK(cudaMemset(attn_, 0, kernels::dtype_size(opts_.wtype) * w_.ld_q));
  ATLAS_CUDA_CHECK(cudaMemset(hb_, 0, kernels::dtype_size(opts_.wtype) * w_.ld_hidden));
  ATLAS_CUDA_CHECK(cudaMemset(tickets_, 0, sizeof(int) * c.n_kv_heads));
  ATLAS_CUDA_CHECK(cudaMemset(argmax_scratch_, 0, kernels::argmax_scratch_bytes()));
  ATLAS_CUDA_CHECK(cudaDeviceSynchronize());

  for (int i = 0; i < c.n_layers; ++i) layer_plans_.push_back({i, i == opts_.veto_layer});
}

CudaDecoder::~CudaDecoder() {
  for (auto& [b, g] : graphs_) {
    if (g.exec) cudaGraphExecDestroy(g.exec);
    if (g.graph) cudaGraphDestroy(g.graph);
  }
  if (cublas_) cublasDestroy(cublas_);
  if (stream_) cudaStreamDestroy(stream_);
}

void CudaDecoder::layout(const ModelConfig& c, Arena& arena) {
  const std::size_t es = kernels::dtype_size(opts_.wtype);
  std::size_t mark = arena.used();
  auto section = [&](std::size_t& field) { field = arena.used() - mark; mark = arena.used(); };

  w_ = layout_weights(c, opts_.wtype, arena);
  section(plan_.weights);

  k_cache_.assign(c.n_layers, nullptr);
  v_cache_.assign(c.n_layers, nullptr);
  const std::size_t kv_layer = static_cast<std::size_t>(c.n_kv_heads) * opts_.max_seq * c.head_dim * es;
  for (int l = 0; l < c.n_layers; ++l) {
    k_cache_[l] = arena.take(kv_layer);
    v_cache_[l] = arena.take(kv_layer);
  }
  section(plan_.kv_cache);

  const int G = c.n_heads / c.n_kv_heads;
  const int qkv_dim = c.q_dim() + 2 * c.kv_dim();
  x_ = static_cast<float*>(arena.take(sizeof(float) * c.dim));
  qkv_ = static_cast<float*>(arena.take(sizeof(float) * qkv_dim));
  attn_ = arena.take(es * w_.ld_q);
  hb_ = arena.take(es * w_.ld_hidden);
  logits_d_ = static_cast<float*>(arena.take(sizeof(float) * c.vocab_size));
  part_o_ = static_cast<float*>(arena.take(sizeof(float) * c.n_kv_heads * 32 * G * c.head_dim));
  part_ml_ = static_cast<float*>(arena.take(sizeof(float) * c.n_kv_heads * 32 * G * 2));
  tickets_ = static_cast<int*>(arena.take(sizeof(int) * c.n_kv_heads));
  rope_cs_ = static_cast<float*>(arena.take(sizeof(float) * c.head_dim));
  argmax_scratch_ = arena.take(kernels::argmax_scratch_bytes());
  step_d_ = static_cast<Step*>(arena.take(sizeof(Step)));
  token_out_d_ = static_cast<int*>(arena.take(sizeof(int)));
  section(plan_.decode_workspace);

  // Prefill chunk: bounded so the score matrices [n_heads][chunk][max_seq] stay within ~4 GiB,
  // and at most 1024 tokens: chunks make the materialised causal scores roughly triangular
  // (chunk c sees (c+1) * chunk keys), which cuts attention's memory traffic by about a third
  // at 4096 tokens while the projection GEMMs stay large enough to run near peak.
  // The flash kernel keeps scores on chip: no score workspace, the chunk is only capped.
  const std::size_t ld_keys = padded_ld(opts_.max_seq);
  const std::size_t per_row_scores = static_cast<std::size_t>(c.n_heads) * ld_keys * (sizeof(float) + es);
  const std::size_t budget = std::size_t{4} << 30;
  const int cap = opts_.max_prefill_chunk > 0 ? opts_.max_prefill_chunk : (flash_prefill_ ? 4096 : 1024);
  prefill_chunk_ = flash_prefill_ ? cap
                                  : static_cast<int>(std::clamp<std::size_t>(budget / per_row_scores, 16, cap));
  prefill_chunk_ = std::min(prefill_chunk_, opts_.max_seq);
  const std::size_t P = prefill_chunk_;
  const int ld_wide = std::max({w_.ld_dim, w_.ld_q, w_.ld_hidden});
  tokens_d_ = static_cast<int*>(arena.take(sizeof(int) * P));
  px_ = static_cast<float*>(arena.take(sizeof(float) * P * c.dim));
  pxb_ = arena.take(es * P * ld_wide);
  pqkv_ = static_cast<float*>(arena.take(sizeof(float) * P * std::max(qkv_dim, 2 * c.hidden_dim)));
  pq_ = arena.take(es * P * c.n_heads * c.head_dim);
  if (!flash_prefill_) {
    ps_ = static_cast<float*>(arena.take(sizeof(float) * P * c.n_heads * ld_keys));
    pp_ = arena.take(es * P * c.n_heads * ld_keys);
    po_ = arena.take(es * P * c.n_heads * c.head_dim);
  }
  cublas_ws_bytes_ = std::size_t{32} << 20;
  cublas_ws_ = arena.take(cublas_ws_bytes_);
  section(plan_.prefill_workspace);
  plan_.total = arena.used();
  plan_.prefill_chunk = prefill_chunk_;
}

std::size_t CudaDecoder::bytes_per_token(int kv_len) const {
  const ModelConfig& c = w_.config;
  const std::size_t kv = 2ull * c.n_layers * c.n_kv_heads * c.head_dim * kernels::dtype_size(opts_.wtype) *
                         static_cast<std::size_t>(kv_len);
  return w_.bytes_read_per_token + kv;
}

std::vector<GraphVeto> CudaDecoder::vetoes() const {
  std::vector<GraphVeto> out;
  for (const auto& l : layer_plans_)
    if (auto why = l.decode_graph_unsupported()) out.push_back({"blk." + std::to_string(l.index), *why});
  return out;
}

std::span<const float> CudaDecoder::logits() const {
  return {logits_h_.as<float>(), static_cast<std::size_t>(w_.config.vocab_size)};
}

void CudaDecoder::sync() {
  ATLAS_CUDA_CHECK(cudaStreamSynchronize(stream_));
  ++counters_.host_syncs;
}

int CudaDecoder::run(std::span<const int> tokens, int pos, bool want_logits, DeviceSample sample) {
  const ModelConfig& c = w_.config;
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
  kernels::DeviceSampling& ds = step_h_.as<Step>()->sampling;
  ds.temperature = sample.temperature;
  ds.seed = sample.seed;
  if (tokens.size() == 1) return decode(tokens[0], pos, want_logits);
  prefill(tokens, pos, want_logits);
  return *token_h_.as<int>();
}

// ---------------------------------------------------------------------------------------------
// Decode

std::vector<GraphKernelNode> CudaDecoder::enqueue_step(int bucket, bool eager) {
  const ModelConfig& c = w_.config;
  const DType wt = opts_.wtype;
  cudaStream_t s = stream_;
  std::vector<Stage> stages;
  std::vector<GraphKernelNode> nodes;
  auto kernel = [&](Stage st) {
    stages.push_back(st);
    if (eager) {
      ++counters_.kernel_launches;
      return;
    }
    // Capturing: the node just added is the capture's only dependency (one stream, a chain).
    cudaStreamCaptureStatus status;
    const cudaGraphNode_t* deps = nullptr;
    std::size_t n_deps = 0;
    ATLAS_CUDA_CHECK(cudaStreamGetCaptureInfo(s, &status, nullptr, nullptr, &deps, nullptr, &n_deps));
    nodes.push_back({n_deps == 1 ? deps[0] : nullptr, st});
  };

  ATLAS_CUDA_CHECK(cudaMemcpyAsync(step_d_, step_h_.get(), sizeof(Step), cudaMemcpyHostToDevice, s));
  {
    Range r(eager, "embed");
    kernels::embed_token(wt, w_.tok_embd, w_.ld_dim, c.dim, &step_d_->token, x_,
                         {&step_d_->pos, c.head_dim, c.rope_theta, rope_cs_}, s);
    kernel(Stage::embed);
  }
  const int splits = splits_for(bucket);
  const int qkv_rows = c.q_dim() + 2 * c.kv_dim();
  for (int l = 0; l < c.n_layers; ++l) {
    const DeviceLayer& L = w_.layers[l];
    {
      Range r(eager, "qkv");  // attn_norm fused into the prologue
      kernels::gemv({wt, L.wqkv, qkv_rows, c.dim, w_.ld_dim, kernels::GemvInput::rmsnorm, x_, L.attn_norm, c.rms_eps,
                     kernels::GemvOutput::store, qkv_},
                    s);
      kernel(Stage::qkv);
    }
    {
      Range r(eager, "attention");  // q/k-norm, RoPE and the KV write fused
      kernels::DecodeAttentionArgs a;
      a.wtype = wt;
      a.prep = {c.n_heads, c.n_kv_heads, c.head_dim, L.q_norm, L.k_norm, c.rms_eps, c.rope_theta,
                c.rope_layout == RopeLayout::interleaved};
      a.qkv = qkv_;
      a.k_cache = k_cache_[l];
      a.v_cache = v_cache_[l];
      a.max_seq = opts_.max_seq;
      a.pos = &step_d_->pos;
      a.rope_cs = rope_cs_;
      a.n_splits = splits;
      a.chunk_cap = bucket / splits;
      a.part_o = part_o_;
      a.part_ml = part_ml_;
      a.tickets = tickets_;
      a.out = attn_;
      kernels::attention_decode(a, s);
      kernel(Stage::attention);
    }
    {
      Range r(eager, "o_proj");  // residual add fused into the epilogue
      kernels::gemv({wt, L.wo, c.dim, c.q_dim(), w_.ld_q, kernels::GemvInput::plain, attn_, nullptr, 0.0f,
                     kernels::GemvOutput::add, x_},
                    s);
      kernel(Stage::o_proj);
    }
    {
      Range r(eager, "ffn_gate_up");  // ffn_norm in the prologue, SwiGLU in the epilogue
      kernels::gemv({wt, L.wgu, 2 * c.hidden_dim, c.dim, w_.ld_dim, kernels::GemvInput::rmsnorm, x_, L.ffn_norm,
                     c.rms_eps, kernels::GemvOutput::swiglu, hb_},
                    s);
      kernel(Stage::ffn_gate_up);
    }
    {
      Range r(eager, "ffn_down");
      kernels::gemv({wt, L.wdown, c.dim, c.hidden_dim, w_.ld_hidden, kernels::GemvInput::plain, hb_, nullptr, 0.0f,
                     kernels::GemvOutput::add, x_},
                    s);
      kernel(Stage::ffn_down);
    }
  }
  {
    Range r(eager, "lm_head");  // final norm fused into the prologue
    kernels::gemv({wt, w_.output, c.vocab_size, c.dim, w_.ld_dim, kernels::GemvInput::rmsnorm, x_, w_.output_norm,
                   c.rms_eps, kernels::GemvOutput::store, logits_d_},
                  s);
    kernel(Stage::lm_head);
  }
  {
    Range r(eager, "sample");
    kernels::sample_token(logits_d_, c.vocab_size, &step_d_->sampling, token_out_d_, argmax_scratch_, s);
    kernel(Stage::sample);
  }
  ATLAS_CUDA_CHECK(cudaMemcpyAsync(token_h_.get(), token_out_d_, sizeof(int), cudaMemcpyDeviceToHost, s));
  step_stages_ = std::move(stages);
  return nodes;
}

int CudaDecoder::decode(int token, int pos, bool want_logits) {
  if (observer_) observer_(true);
  Range step_range(true, "decode_step");
  Step* st = step_h_.as<Step>();
  st->token = token;
  st->pos = pos;
  const int bucket = bucket_for(pos + 1);
  ++counters_.decode_steps;
  if (graphs_enabled()) {
    auto it = graphs_.find(bucket);
    if (it == graphs_.end()) {
      Captured cap;
      ATLAS_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
      try {
        cap.kernels = enqueue_step(bucket, false);
      } catch (...) {
        cudaGraph_t g = nullptr;
        cudaStreamEndCapture(stream_, &g);
        if (g) cudaGraphDestroy(g);
        throw;
      }
      ATLAS_CUDA_CHECK(cudaStreamEndCapture(stream_, &cap.graph));
      try {
        instantiate(cap);
      } catch (...) {
        cudaGraphDestroy(cap.graph);  // nothing half-made stays: the next step captures again
        throw;
      }
      it = graphs_.emplace(bucket, std::move(cap)).first;
      ++counters_.graph_captures;
    }
    ATLAS_CUDA_CHECK(cudaGraphLaunch(it->second.exec, stream_));
    ++counters_.graph_launches;
    ++counters_.graph_steps;
  } else {
    enqueue_step(bucket, true);
    ++counters_.eager_steps;
  }
  counters_.h2d_copies += 1;
  counters_.h2d_bytes += sizeof(Step);
  counters_.d2h_copies += 1;
  counters_.d2h_bytes += sizeof(int);
  if (want_logits) {
    ATLAS_CUDA_CHECK(cudaMemcpyAsync(logits_h_.get(), logits_d_, sizeof(float) * w_.config.vocab_size,
                                     cudaMemcpyDeviceToHost, stream_));
    counters_.d2h_copies += 1;
    counters_.d2h_bytes += sizeof(float) * w_.config.vocab_size;
  }
  sync();
  if (observer_) observer_(false);
  return *token_h_.as<int>();
}

// The new executable replaces the old one only once it is instantiated and uploaded; on an
// error the old one (or none) stays and the exception propagates.
void CudaDecoder::instantiate(Captured& cap) {
  cudaGraphExec_t exec = nullptr;
  ATLAS_CUDA_CHECK(cudaGraphInstantiate(&exec, cap.graph, 0));
  if (const cudaError_t e = cudaGraphUpload(exec, stream_); e != cudaSuccess) {
    cudaGraphExecDestroy(exec);
    kernels::throw_cuda(e, "cudaGraphUpload(exec, stream_)", __FILE__, __LINE__);
  }
  if (cap.exec) ATLAS_CUDA_CHECK(cudaGraphExecDestroy(cap.exec));
  cap.exec = exec;
}

void CudaDecoder::reinstantiate_graphs() {
  for (auto& [bucket, cap] : graphs_) instantiate(cap);
  ATLAS_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

std::vector<GraphKernelNode> CudaDecoder::graph_kernel_nodes() const {
  std::vector<GraphKernelNode> all;
  for (const auto& [bucket, cap] : graphs_) all.insert(all.end(), cap.kernels.begin(), cap.kernels.end());
  return all;
}

// ---------------------------------------------------------------------------------------------
// Prefill

void CudaDecoder::gemm(const void* w, int rows, int k, int ldw, const void* x, int ldx, int n, void* y, int ldy,
                       bool y_is_weight_type, float beta) {
  // Row-major Y[n][rows] (+)= X[n][k] . W[rows][k]^T, i.e. column-major Y^T = W^T(op T) . X^T.
  const float alpha = 1.0f;
  const cudaDataType_t wt = cuda_type(opts_.wtype);
  const cublasComputeType_t ct = opts_.wtype == DType::f32 ? CUBLAS_COMPUTE_32F_PEDANTIC : CUBLAS_COMPUTE_32F;
  ATLAS_CUBLAS_CHECK(cublasGemmEx(cublas_, CUBLAS_OP_T, CUBLAS_OP_N, rows, n, k, &alpha, w, wt, ldw, x, wt, ldx, &beta, y,
                                  y_is_weight_type ? wt : CUDA_R_32F, ldy, ct, CUBLAS_GEMM_DEFAULT));
}

void CudaDecoder::prefill(std::span<const int> tokens, int pos, bool want_logits) {
  const ModelConfig& c = w_.config;
  const DType wt = opts_.wtype;
  cudaStream_t s = stream_;
  const int qkv_dim = c.q_dim() + 2 * c.kv_dim();
  const int G = c.n_heads / c.n_kv_heads;
  const int d = c.head_dim;
  const cudaDataType_t cwt = cuda_type(wt);
  const cublasComputeType_t ct = wt == DType::f32 ? CUBLAS_COMPUTE_32F_PEDANTIC : CUBLAS_COMPUTE_32F;
  const std::size_t es = kernels::dtype_size(wt);
  ++counters_.prefill_calls;
  counters_.prefill_tokens += static_cast<std::int64_t>(tokens.size());
  // The sampling parameters the last position's draw reads (token/pos fields unused here).
  ATLAS_CUDA_CHECK(cudaMemcpyAsync(step_d_, step_h_.get(), sizeof(Step), cudaMemcpyHostToDevice, s));
  ++counters_.h2d_copies;
  counters_.h2d_bytes += sizeof(Step);

  for (std::size_t off = 0; off < tokens.size(); off += prefill_chunk_) {
    const int n = static_cast<int>(std::min<std::size_t>(prefill_chunk_, tokens.size() - off));
    const int p0 = pos + static_cast<int>(off);
    const int n_keys = p0 + n;
    const int ld_keys = padded_ld(n_keys);
    Range chunk_range(true, "prefill");
    int* staged = tokens_h_.as<int>() + off;
    std::memcpy(staged, tokens.data() + off, sizeof(int) * n);
    ATLAS_CUDA_CHECK(cudaMemcpyAsync(tokens_d_, staged, sizeof(int) * n, cudaMemcpyHostToDevice, s));
    ++counters_.h2d_copies;
    counters_.h2d_bytes += sizeof(int) * n;
    {
      Range r(true, "embed");
      kernels::embed_rows(wt, w_.tok_embd, w_.ld_dim, c.dim, tokens_d_, n, px_, s);
    }
    for (int l = 0; l < c.n_layers; ++l) {
      const DeviceLayer& L = w_.layers[l];
      {
        Range r(true, "attn_norm");
        kernels::rmsnorm_rows(wt, px_, L.attn_norm, c.rms_eps, n, c.dim, pxb_, w_.ld_dim, s);
      }
      {
        Range r(true, "qkv");
        gemm(L.wqkv, qkv_dim, c.dim, w_.ld_dim, pxb_, w_.ld_dim, n, pqkv_, qkv_dim, false, 0.0f);
      }
      {
        Range r(true, "rope");
        kernels::RopePrefillArgs a;
        a.wtype = wt;
        a.prep = {c.n_heads, c.n_kv_heads, c.head_dim, L.q_norm, L.k_norm, c.rms_eps, c.rope_theta,
                  c.rope_layout == RopeLayout::interleaved};
        a.qkv = pqkv_;
        a.qkv_ld = qkv_dim;
        a.n_tokens = n;
        a.pos = p0;
        a.q_out = pq_;
        a.k_cache = k_cache_[l];
        a.v_cache = v_cache_[l];
        a.max_seq = opts_.max_seq;
        kernels::rope_prefill(a, s);
      }
      if (flash_prefill_) {
        Range r(true, "attention");  // FlashAttention-2 style: scores stay on chip
        kernels::FlashPrefillArgs fa;
        fa.q = pq_;
        fa.q_head_stride = static_cast<long long>(n) * d;
        fa.k_cache = k_cache_[l];
        fa.v_cache = v_cache_[l];
        fa.max_seq = opts_.max_seq;
        fa.n_heads = c.n_heads;
        fa.n_kv_heads = c.n_kv_heads;
        fa.head_dim = d;
        fa.n_query = n;
        fa.pos0 = p0;
        fa.scale = 1.0f / std::sqrt(static_cast<float>(d));
        fa.out = pxb_;
        fa.out_ld = w_.ld_q;
        kernels::flash_attention_prefill(fa, s);
        if (w_.ld_q > c.q_dim())
          ATLAS_CUDA_CHECK(cudaMemset2DAsync(static_cast<char*>(pxb_) + c.q_dim() * es, w_.ld_q * es, 0,
                                             (w_.ld_q - c.q_dim()) * es, n, s));
      } else {
        Range r(true, "attention");
        // Per KV head g (batched): S_g[G*n][keys] = Q_g . K_g^T / sqrt(d); P = causal softmax; O_g = P . V_g.
        const float scale = 1.0f / std::sqrt(static_cast<float>(d)), zero = 0.0f, one = 1.0f;
        const long long kv_stride = static_cast<long long>(opts_.max_seq) * d;
        ATLAS_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
            cublas_, CUBLAS_OP_T, CUBLAS_OP_N, n_keys, G * n, d, &scale, k_cache_[l], cwt, d, kv_stride, pq_, cwt, d,
            static_cast<long long>(G) * n * d, &zero, ps_, CUDA_R_32F, ld_keys, static_cast<long long>(G) * n * ld_keys,
            c.n_kv_heads, ct, CUBLAS_GEMM_DEFAULT));
        kernels::causal_softmax(wt, ps_, pp_, c.n_heads * n, n, ld_keys, p0, s);
        ATLAS_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
            cublas_, CUBLAS_OP_N, CUBLAS_OP_N, d, G * n, n_keys, &one, v_cache_[l], cwt, d, kv_stride, pp_, cwt,
            ld_keys, static_cast<long long>(G) * n * ld_keys, &zero, po_, cwt, d, static_cast<long long>(G) * n * d,
            c.n_kv_heads, ct, CUBLAS_GEMM_DEFAULT));
        kernels::heads_to_rows(wt, po_, pxb_, c.n_heads, n, d, w_.ld_q, s);
        if (w_.ld_q > c.q_dim())  // padding columns of the rows must be zero for the next GEMM's k
          ATLAS_CUDA_CHECK(cudaMemset2DAsync(static_cast<char*>(pxb_) + c.q_dim() * es, w_.ld_q * es, 0,
                                             (w_.ld_q - c.q_dim()) * es, n, s));
      }
      {
        Range r(true, "o_proj");
        gemm(L.wo, c.dim, c.q_dim(), w_.ld_q, pxb_, w_.ld_q, n, px_, c.dim, false, 1.0f);
      }
      {
        Range r(true, "ffn_norm");
        kernels::rmsnorm_rows(wt, px_, L.ffn_norm, c.rms_eps, n, c.dim, pxb_, w_.ld_dim, s);
      }
      {
        Range r(true, "ffn_gate_up");
        // Gate/up in the weight type: half the bytes of the widest activation (HF rounds it too).
        gemm(L.wgu, 2 * c.hidden_dim, c.dim, w_.ld_dim, pxb_, w_.ld_dim, n, pqkv_, 2 * c.hidden_dim, true, 0.0f);
        kernels::swiglu_rows(wt, pqkv_, n, c.hidden_dim, pxb_, w_.ld_hidden, s);
      }
      {
        Range r(true, "ffn_down");
        gemm(L.wdown, c.dim, c.hidden_dim, w_.ld_hidden, pxb_, w_.ld_hidden, n, px_, c.dim, false, 1.0f);
      }
    }
    if (off + n < tokens.size()) continue;
    {
      Range r(true, "lm_head");  // only the last position's logits are needed
      kernels::gemv({wt, w_.output, c.vocab_size, c.dim, w_.ld_dim, kernels::GemvInput::rmsnorm,
                     px_ + static_cast<std::size_t>(n - 1) * c.dim, w_.output_norm, c.rms_eps,
                     kernels::GemvOutput::store, logits_d_},
                    s);
    }
    {
      Range r(true, "sample");
      kernels::sample_token(logits_d_, c.vocab_size, &step_d_->sampling, token_out_d_, argmax_scratch_, s);
    }
  }
  ATLAS_CUDA_CHECK(cudaMemcpyAsync(token_h_.get(), token_out_d_, sizeof(int), cudaMemcpyDeviceToHost, s));
  ++counters_.d2h_copies;
  counters_.d2h_bytes += sizeof(int);
  if (want_logits) {
    ATLAS_CUDA_CHECK(cudaMemcpyAsync(logits_h_.get(), logits_d_, sizeof(float) * c.vocab_size, cudaMemcpyDeviceToHost, s));
    ++counters_.d2h_copies;
    counters_.d2h_bytes += sizeof(float) * c.vocab_size;
  }
  sync();
}

}  // namespace atlas::engine::cuda
