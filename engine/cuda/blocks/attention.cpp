// attention (Llama, Qwen3) and gated_attention (Qwen3-Next) mixers on the device.
//
// Decode, three launches (attention) or four (gated): the q/k/v GEMV with the input RMSNorm in
// its prologue; one attention kernel that applies q/k RMSNorm and RoPE (partial for
// gated_attention: the first rope_dim dims of each head), writes the new K/V into this layer's
// cache and attends over it (GQA); gated_attention multiplies the output by sigmoid(gate)
// (HF Qwen3NextAttention: q_proj emits [query | gate] per head); the o_proj GEMV adds into x.
#include <cmath>
#include <string>

#include "engine/cuda/blocks/block_util.hpp"
#include "engine/cuda/blocks/device_block.hpp"
#include "engine/error.hpp"
#include "kernels/attention.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/flash_prefill.hpp"
#include "kernels/gated_attention.hpp"
#include "kernels/gemv.hpp"

namespace atlas::engine::cuda {

using kernels::ElemType;
using kernels::padded_ld;

namespace {

class AttentionBlock final : public DeviceBlock {
 public:
  AttentionBlock(const ModelConfig& c, int layer, ElemType wt, bool gated, bool veto)
      : c_(c), layer_(layer), wt_(wt), gated_(gated), veto_(veto) {
    ld_dim_ = padded_ld(c.dim);
    ld_q_ = padded_ld(c.q_dim());
    G_ = c.n_heads / c.n_kv_heads;
    qkv_rows_ = c.q_dim() + 2 * c.kv_dim() + (gated ? c.q_dim() : 0);
    rope_dim_ = c.rot_dim() < c.head_dim ? c.rot_dim() : 0;
    // Checked here, not at the first decode inside a capture: RoPE rotates pairs.
    if (c.rot_dim() % 2 != 0 || c.rot_dim() > c.head_dim)
      throw EngineError("cuda backend: layer " + std::to_string(layer) + ": rope_dim " + std::to_string(c.rot_dim()) +
                        " must be even and <= head_dim " + std::to_string(c.head_dim));
  }

  const char* kind() const override { return gated_ ? "gated_attention" : "attention"; }

  void layout(Arenas& a) override {
    const std::size_t start = a.weights.used();
    attn_norm_ = take<float>(a.weights, padded_ld(c_.dim));
    wqkv_ = take(a.weights, wt_, static_cast<std::size_t>(qkv_rows_) * ld_dim_);
    wo_ = take(a.weights, wt_, static_cast<std::size_t>(c_.dim) * ld_q_);
    if (c_.qk_norm) {  // as the CPU backend: q/k RMSNorm when the config says so
      q_norm_ = take<float>(a.weights, padded_ld(c_.head_dim));
      k_norm_ = take<float>(a.weights, padded_ld(c_.head_dim));
    }
    weight_bytes_ = a.weights.used() - start;
    const std::size_t kv = static_cast<std::size_t>(c_.n_kv_heads) * max_seq_ * c_.head_dim;
    k_cache_ = take(a.state, wt_, kv);
    v_cache_ = take(a.state, wt_, kv);
    qkv_ = take<float>(a.workspace, qkv_rows_);
    attn_ = take(a.workspace, wt_, ld_q_);
    part_o_ = take<float>(a.workspace, static_cast<std::size_t>(c_.n_kv_heads) * 32 * G_ * c_.head_dim);
    part_ml_ = take<float>(a.workspace, static_cast<std::size_t>(c_.n_kv_heads) * 32 * G_ * 2);
    tickets_ = take<int>(a.workspace, c_.n_kv_heads);
  }

  void set_max_seq(int max_seq) { max_seq_ = max_seq; }

  void upload(const ModelWeights& mw, Uploader& up) override {
    const LayerWeights& l = mw.layers[static_cast<std::size_t>(layer_)];
    const std::size_t es = kernels::elem_size(wt_);
    const std::string blk = "blk." + std::to_string(layer_) + ".";
    up.f32(l.attn_norm, c_.dim, attn_norm_, (blk + "attn_norm").c_str());
    char* qkv = static_cast<char*>(wqkv_);
    const std::size_t row = static_cast<std::size_t>(ld_dim_) * es;
    if (!gated_) {
      up.rows(l.wq, c_.q_dim(), c_.dim, qkv, ld_dim_, ld_dim_, (blk + "attn_q").c_str());
    } else {
      // HF q_proj rows per head: [query (head_dim) | gate (head_dim)]; the device keeps
      // [query of all heads | k | v | gate of all heads], so the attention kernel reads q, k, v
      // as in the dense layout.
      std::vector<int> query, gate;
      for (int h = 0; h < c_.n_heads; ++h)
        for (int i = 0; i < c_.head_dim; ++i) {
          query.push_back(h * 2 * c_.head_dim + i);
          gate.push_back(h * 2 * c_.head_dim + c_.head_dim + i);
        }
      up.gather_rows(l.wq, 2 * c_.q_dim(), c_.dim, query, qkv, ld_dim_, (blk + "attn_q").c_str());
      up.gather_rows(l.wq, 2 * c_.q_dim(), c_.dim, gate,
                     qkv + static_cast<std::size_t>(c_.q_dim() + 2 * c_.kv_dim()) * row, ld_dim_,
                     (blk + "attn_q").c_str());
    }
    up.rows(l.wk, c_.kv_dim(), c_.dim, qkv + static_cast<std::size_t>(c_.q_dim()) * row, ld_dim_, ld_dim_,
            (blk + "attn_k").c_str());
    up.rows(l.wv, c_.kv_dim(), c_.dim, qkv + static_cast<std::size_t>(c_.q_dim() + c_.kv_dim()) * row, ld_dim_, ld_dim_,
            (blk + "attn_v").c_str());
    up.rows(l.wo, c_.dim, c_.q_dim(), wo_, ld_q_, ld_q_, (blk + "attn_output").c_str());
    if (q_norm_) {
      up.f32(l.q_norm, c_.head_dim, q_norm_, (blk + "attn_q_norm").c_str());
      up.f32(l.k_norm, c_.head_dim, k_norm_, (blk + "attn_k_norm").c_str());
    }
  }

  void prepare(int max_bucket) override {
    const int chunk_cap = max_bucket / splits(max_bucket);
    // The split-K kernel keeps a slice's scores in shared memory: at a long context with a large
    // GQA group (Qwen3-Next: 8 query heads per KV head) the largest bucket's slice may not fit.
    int dev = 0, optin = 0;
    ATLAS_CUDA_CHECK(cudaGetDevice(&dev));
    ATLAS_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    const std::size_t smem = kernels::attention_decode_smem(G_, c_.head_dim, chunk_cap, wt_);
    if (rope_dim_ != 0 && smem > static_cast<std::size_t>(optin))
      throw EngineError("cuda backend: " + std::string(kind()) + " decode attention at max_seq_len " + std::to_string(max_seq_) +
                        " needs " + std::to_string(smem) + " bytes of shared memory per block, the device allows " +
                        std::to_string(optin) + "; pass --max-seq-len " +
                        std::to_string(attention_max_context(c_, wt_)) + " or less");
    kernels::attention_decode_prepare(wt_, G_, c_.head_dim, chunk_cap, rope_dim_);
  }

  int splits(int bucket) const { return kernels::attention_decode_splits(wt_, G_, c_.head_dim, bucket, rope_dim_); }

  void decode(StepContext& s) override {
    cudaStream_t st = s.tape.stream();
    s.tape.kernel(Stage::qkv, [&] {  // attn_norm fused into the prologue
      kernels::gemv({wt_, wqkv_, qkv_rows_, c_.dim, ld_dim_, kernels::GemvInput::rmsnorm, s.x, attn_norm_, c_.rms_eps,
                     kernels::GemvOutput::store, qkv_},
                    st);
    });
    s.tape.kernel(Stage::attention, [&] {  // q/k-norm, RoPE and the KV write fused
      const int n_splits = splits(s.bucket);
      kernels::DecodeAttentionArgs a;
      a.wtype = wt_;
      a.prep = {c_.n_heads, c_.n_kv_heads, c_.head_dim, q_norm_, k_norm_, c_.rms_eps, c_.rope_theta,
                c_.rope_layout == RopeLayout::interleaved, rope_dim_};
      a.qkv = qkv_;
      a.k_cache = k_cache_;
      a.v_cache = v_cache_;
      a.max_seq = max_seq_;
      a.pos = s.pos;
      a.rope_cs = rope_dim_ == 0 ? s.rope_cs : nullptr;
      a.n_splits = n_splits;
      a.chunk_cap = s.bucket / n_splits;
      a.part_o = part_o_;
      a.part_ml = part_ml_;
      a.tickets = tickets_;
      a.out = attn_;
      kernels::attention_decode(a, st);
    });
    if (gated_) {
      s.tape.kernel(Stage::attn_gate, [&] {
        kernels::attention_output_gate(wt_, attn_, qkv_ + c_.q_dim() + 2 * c_.kv_dim(), c_.q_dim(), st);
      });
    }
    s.tape.kernel(Stage::o_proj, [&] {  // residual add fused into the epilogue
      kernels::gemv({wt_, wo_, c_.dim, c_.q_dim(), ld_q_, kernels::GemvInput::plain, attn_, nullptr, 0.0f,
                     kernels::GemvOutput::add, s.x},
                    st);
    });
  }

  bool has_chunked_prefill() const override { return true; }
  int prefill_f_cols() const override { return qkv_rows_; }  // [q | k | v] (| gate)

  void prefill(PrefillContext& p) override {
    const int n = p.n, d = c_.head_dim, G = G_;
    const int qkv_dim = qkv_rows_;  // [q | k | v], then gated_attention's gate
    const std::size_t es = kernels::elem_size(wt_);
    cudaStream_t s = p.tape.stream();
    const cudaDataType_t cwt = cuda_type(wt_);
    const cublasComputeType_t ct = wt_ == ElemType::f32 ? CUBLAS_COMPUTE_32F_PEDANTIC : CUBLAS_COMPUTE_32F;
    const int n_keys = p.pos0 + n;
    const int ld_keys = padded_ld(n_keys);
    p.tape.work(Stage::attn_norm, [&] { kernels::rmsnorm_rows(wt_, p.x, attn_norm_, c_.rms_eps, n, c_.dim, p.xb, ld_dim_, s); });
    p.tape.work(Stage::qkv, [&] { prefill_gemm(p.cublas, wt_, wqkv_, qkv_dim, c_.dim, ld_dim_, p.xb, ld_dim_, n, p.f, qkv_dim, false, 0.0f); });
    p.tape.work(Stage::rope, [&] {
      kernels::RopePrefillArgs a;
      a.wtype = wt_;
      a.prep = {c_.n_heads, c_.n_kv_heads, c_.head_dim, q_norm_, k_norm_, c_.rms_eps, c_.rope_theta,
                c_.rope_layout == RopeLayout::interleaved, rope_dim_};
      a.qkv = p.f;
      a.qkv_ld = qkv_dim;
      a.n_tokens = n;
      a.pos = p.pos0;
      a.q_out = p.q;
      a.k_cache = k_cache_;
      a.v_cache = v_cache_;
      a.max_seq = max_seq_;
      kernels::rope_prefill(a, s);
    });
    if (p.flash) {
      p.tape.work(Stage::attention, [&] {  // FlashAttention-2 style: scores stay on chip
        kernels::FlashPrefillArgs fa;
        fa.q = p.q;
        fa.q_head_stride = static_cast<long long>(n) * d;
        fa.k_cache = k_cache_;
        fa.v_cache = v_cache_;
        fa.max_seq = max_seq_;
        fa.n_heads = c_.n_heads;
        fa.n_kv_heads = c_.n_kv_heads;
        fa.head_dim = d;
        fa.n_query = n;
        fa.pos0 = p.pos0;
        fa.scale = 1.0f / std::sqrt(static_cast<float>(d));
        fa.out = p.xb;
        fa.out_ld = ld_q_;
        kernels::flash_attention_prefill(fa, s);
        if (ld_q_ > c_.q_dim())
          ATLAS_CUDA_CHECK(cudaMemset2DAsync(static_cast<char*>(p.xb) + c_.q_dim() * es, ld_q_ * es, 0,
                                             (ld_q_ - c_.q_dim()) * es, n, s));
      });
    } else {
      p.tape.work(Stage::attention, [&] {
        // Per KV head g (batched): S_g[G*n][keys] = Q_g . K_g^T / sqrt(d); P = causal softmax; O_g = P . V_g.
        const float scale = 1.0f / std::sqrt(static_cast<float>(d)), zero = 0.0f, one = 1.0f;
        const long long kv_stride = static_cast<long long>(max_seq_) * d;
        ATLAS_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
            p.cublas, CUBLAS_OP_T, CUBLAS_OP_N, n_keys, G * n, d, &scale, k_cache_, cwt, d, kv_stride, p.q, cwt, d,
            static_cast<long long>(G) * n * d, &zero, p.scores, CUDA_R_32F, ld_keys,
            static_cast<long long>(G) * n * ld_keys, c_.n_kv_heads, ct, CUBLAS_GEMM_DEFAULT));
        kernels::causal_softmax(wt_, p.scores, p.probs, c_.n_heads * n, n, ld_keys, p.pos0, s);
        ATLAS_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
            p.cublas, CUBLAS_OP_N, CUBLAS_OP_N, d, G * n, n_keys, &one, v_cache_, cwt, d, kv_stride, p.probs, cwt,
            ld_keys, static_cast<long long>(G) * n * ld_keys, &zero, p.o, cwt, d, static_cast<long long>(G) * n * d,
            c_.n_kv_heads, ct, CUBLAS_GEMM_DEFAULT));
        kernels::heads_to_rows(wt_, p.o, p.xb, c_.n_heads, n, d, ld_q_, s);
        if (ld_q_ > c_.q_dim())  // padding columns of the rows must be zero for the next GEMM's k
          ATLAS_CUDA_CHECK(cudaMemset2DAsync(static_cast<char*>(p.xb) + c_.q_dim() * es, ld_q_ * es, 0,
                                             (ld_q_ - c_.q_dim()) * es, n, s));
      });
    }
    if (gated_) {
      p.tape.work(Stage::attn_gate, [&] {
        kernels::attention_output_gate_rows(wt_, p.xb, ld_q_, p.f + c_.q_dim() + 2 * c_.kv_dim(), qkv_dim, c_.q_dim(), n, s);
      });
    }
    p.tape.work(Stage::o_proj, [&] { prefill_gemm(p.cublas, wt_, wo_, c_.dim, c_.q_dim(), ld_q_, p.xb, ld_q_, n, p.x, c_.dim, false, 1.0f); });
  }

  std::vector<Stage> stages() const override {
    // attn_norm runs in the q/k/v GEMV's prologue, rope inside the attention kernel.
    if (gated_) return {Stage::attn_norm, Stage::qkv, Stage::rope, Stage::attention, Stage::attn_gate, Stage::o_proj};
    return {Stage::attn_norm, Stage::qkv, Stage::rope, Stage::attention, Stage::o_proj};
  }

  std::optional<std::string> capture_veto() const override {
    if (veto_) return std::string("capture refused by the ATLAS_CUDA_VETO_LAYER test hook");
    return std::nullopt;
  }

  std::size_t bytes_per_token(int kv_len) const override {
    const std::size_t es = kernels::elem_size(wt_);
    // The matrices and norms (not the arena's alignment padding), then the K/V rows attended.
    const std::size_t weights = (static_cast<std::size_t>(qkv_rows_) * ld_dim_ + static_cast<std::size_t>(c_.dim) * ld_q_) * es +
                                (c_.dim + (q_norm_ || c_.qk_norm ? 2 * static_cast<std::size_t>(c_.head_dim) : 0)) * sizeof(float);
    return weights + 2ull * c_.n_kv_heads * c_.head_dim * es * static_cast<std::size_t>(kv_len);
  }
  std::size_t weight_bytes() const override { return weight_bytes_; }

 private:
  const ModelConfig& c_;
  int layer_;
  ElemType wt_;
  bool gated_, veto_;
  int max_seq_ = 0;
  int ld_dim_ = 0, ld_q_ = 0, G_ = 1, qkv_rows_ = 0, rope_dim_ = 0;
  std::size_t weight_bytes_ = 0;
  void *wqkv_ = nullptr, *wo_ = nullptr;
  float *attn_norm_ = nullptr, *q_norm_ = nullptr, *k_norm_ = nullptr;  ///< gains, float32 (kernels/gemv.hpp)
  void *k_cache_ = nullptr, *v_cache_ = nullptr;  ///< [n_kv][max_seq][head_dim] each
  float* qkv_ = nullptr;   ///< [q | k | v (| gate)] float32
  void* attn_ = nullptr;   ///< weight type [ld_q]
  float *part_o_ = nullptr, *part_ml_ = nullptr;
  int* tickets_ = nullptr;
};

}  // namespace

int attention_max_context(const ModelConfig& c, ElemType wt) {
  const int rot = c.rot_dim() < c.head_dim ? c.rot_dim() : 0;
  if (rot == 0 || c.n_kv_heads <= 0) return 1 << 30;  // the cluster kernel's slices fit at any length
  int dev = 0, optin = 0;
  ATLAS_CUDA_CHECK(cudaGetDevice(&dev));
  ATLAS_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  const int G = c.n_heads / c.n_kv_heads;
  int best = 0;
  for (long long b = 256; b <= (1LL << 30); b *= 2) {
    const int bucket = static_cast<int>(b);
    const int splits = kernels::attention_decode_splits(wt, G, c.head_dim, bucket, rot);
    if (kernels::attention_decode_smem(G, c.head_dim, bucket / splits, wt) > static_cast<std::size_t>(optin)) break;
    best = bucket;
  }
  return best;
}

std::unique_ptr<DeviceBlock> make_attention_block(const ModelConfig& c, int layer, ElemType wt, bool gated, bool veto,
                                                  int max_seq) {
  auto b = std::make_unique<AttentionBlock>(c, layer, wt, gated, veto);
  b->set_max_seq(max_seq);
  return b;
}

}  // namespace atlas::engine::cuda
