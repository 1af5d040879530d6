#include "engine/cuda/cuda_weights.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/error.hpp"
#include "kernels/elementwise.hpp"

namespace atlas::engine::cuda {

using kernels::DType;
using kernels::padded_ld;

DeviceWeights layout_weights(const ModelConfig& c, DType wtype, Arena& arena) {
  DeviceWeights w;
  w.config = c;
  w.wtype = wtype;
  w.ld_dim = padded_ld(c.dim);
  w.ld_q = padded_ld(c.q_dim());
  w.ld_hidden = padded_ld(c.hidden_dim);
  const std::size_t es = kernels::dtype_size(wtype);
  const std::size_t start = arena.used();
  auto take = [&](std::size_t rows, std::size_t ld) { return arena.take(rows * ld * es); };
  const std::size_t qkv_rows = static_cast<std::size_t>(c.q_dim()) + 2 * c.kv_dim();
  w.tok_embd = take(c.vocab_size, w.ld_dim);
  w.layers.resize(c.n_layers);
  for (auto& l : w.layers) {
    l.attn_norm = take(1, padded_ld(c.dim));
    l.wqkv = take(qkv_rows, w.ld_dim);
    l.wo = take(c.dim, w.ld_q);
    if (c.qk_norm) {
      l.q_norm = take(1, padded_ld(c.head_dim));
      l.k_norm = take(1, padded_ld(c.head_dim));
    }
    l.ffn_norm = take(1, padded_ld(c.dim));
    l.wgu = take(2 * static_cast<std::size_t>(c.hidden_dim), w.ld_dim);
    l.wdown = take(c.dim, w.ld_hidden);
  }
  w.output_norm = take(1, padded_ld(c.dim));
  w.output = c.tied_embeddings ? w.tok_embd : take(c.vocab_size, w.ld_dim);
  w.bytes = arena.used() - start;
  const std::size_t per_layer =
      (qkv_rows * w.ld_dim + static_cast<std::size_t>(c.dim) * w.ld_q + 2 * static_cast<std::size_t>(c.hidden_dim) * w.ld_dim +
       static_cast<std::size_t>(c.dim) * w.ld_hidden + 2 * static_cast<std::size_t>(c.dim) +
       (c.qk_norm ? 2 * static_cast<std::size_t>(c.head_dim) : 0)) * es;
  w.bytes_read_per_token = per_layer * c.n_layers + (static_cast<std::size_t>(c.vocab_size) * w.ld_dim + c.dim) * es +
                           static_cast<std::size_t>(c.dim) * es;  // + the one embedding row
  return w;
}

namespace {

/// Copies host rows into device rows. bf16 rows bound for bf16 device weights are copied as they
/// are; other rows (float32, f16, or bf16 for float32 device weights) go through a bounded device
/// staging buffer, typed rows widened to float32 one chunk at a time, so the host never holds a
/// float32 copy of a whole tensor.
class Uploader {
 public:
  explicit Uploader(DType t) : wtype_(t), staging_(kStagingBytes) {}
  void rows(const Weight& src, int rows, int cols, void* dst, int ld, int pitch, const char* what) {
    if (src.size() != static_cast<std::size_t>(rows) * cols)
      throw EngineError(std::string("cuda upload: tensor ") + what + " has " + std::to_string(src.size()) +
                        " values, expected " + std::to_string(static_cast<std::size_t>(rows) * cols));
    const std::size_t es = kernels::dtype_size(wtype_);
    if (src.dtype() == engine::DType::bf16 && wtype_ == DType::bf16) {
      // The file's bf16 rows are the device's bf16 rows: one pitched copy straight from the
      // (mapped) file bytes, no float32 detour on the host or the device (issue 17).
      ATLAS_CUDA_CHECK(cudaMemcpy2D(dst, static_cast<std::size_t>(pitch) * es, src.bytes().data(),
                                    static_cast<std::size_t>(cols) * es, static_cast<std::size_t>(cols) * es,
                                    static_cast<std::size_t>(rows), cudaMemcpyHostToDevice));
      // Columns [cols, ld) are zero, as convert_rows leaves them: the GEMV's 16-byte loads read them.
      if (ld > cols)
        ATLAS_CUDA_CHECK(cudaMemset2D(static_cast<char*>(dst) + static_cast<std::size_t>(cols) * es,
                                      static_cast<std::size_t>(pitch) * es, 0,
                                      static_cast<std::size_t>(ld - cols) * es, static_cast<std::size_t>(rows)));
      return;
    }
    const int chunk = std::max<int>(1, static_cast<int>(kStagingBytes / (sizeof(float) * std::max(cols, 1))));
    for (int r0 = 0; r0 < rows; r0 += chunk) {
      const int n = std::min(chunk, rows - r0);
      const std::size_t first = static_cast<std::size_t>(r0) * cols, count = static_cast<std::size_t>(n) * cols;
      const float* host = nullptr;
      if (src.is_f32()) {
        host = src.data() + first;
      } else {
        host_.resize(count);
        src.to_f32(first, count, host_.data());
        host = host_.data();
      }
      ATLAS_CUDA_CHECK(cudaMemcpy(staging_.get(), host, count * sizeof(float), cudaMemcpyHostToDevice));
      kernels::convert_rows(wtype_, staging_.as<float>(), n, cols,
                            static_cast<char*>(dst) + static_cast<std::size_t>(r0) * pitch * es, ld, pitch, nullptr);
    }
    ATLAS_CUDA_CHECK(cudaDeviceSynchronize());
  }
  void vec(const Weight& src, int n, void* dst, const char* what) {
    rows(src, 1, n, dst, padded_ld(n), padded_ld(n), what);
  }

 private:
  static constexpr std::size_t kStagingBytes = 64u << 20;
  DType wtype_;
  DeviceBuffer staging_;
  std::vector<float> host_;  ///< one chunk of a typed tensor, widened
};

}  // namespace

void upload_weights(const Model& model, DeviceWeights& w) {
  const ModelConfig& c = model.config;
  const ModelWeights& mw = model.weights;
  if (mw.layers.size() != static_cast<std::size_t>(c.n_layers))
    throw EngineError("cuda upload: model has " + std::to_string(mw.layers.size()) + " layers, config says " +
                      std::to_string(c.n_layers));
  Uploader up(w.wtype);
  const std::size_t es = kernels::dtype_size(w.wtype);
  up.rows(mw.tok_embd, c.vocab_size, c.dim, w.tok_embd, w.ld_dim, w.ld_dim, "tok_embd");
  for (int i = 0; i < c.n_layers; ++i) {
    const LayerWeights& l = mw.layers[i];
    const DeviceLayer& d = w.layers[i];
    up.vec(l.attn_norm, c.dim, d.attn_norm, "attn_norm");
    char* qkv = static_cast<char*>(d.wqkv);
    up.rows(l.wq, c.q_dim(), c.dim, qkv, w.ld_dim, w.ld_dim, "wq");
    up.rows(l.wk, c.kv_dim(), c.dim, qkv + static_cast<std::size_t>(c.q_dim()) * w.ld_dim * es, w.ld_dim, w.ld_dim, "wk");
    up.rows(l.wv, c.kv_dim(), c.dim, qkv + static_cast<std::size_t>(c.q_dim() + c.kv_dim()) * w.ld_dim * es, w.ld_dim,
            w.ld_dim, "wv");
    up.rows(l.wo, c.dim, c.q_dim(), d.wo, w.ld_q, w.ld_q, "wo");
    if (c.qk_norm) {
      up.vec(l.q_norm, c.head_dim, d.q_norm, "q_norm");
      up.vec(l.k_norm, c.head_dim, d.k_norm, "k_norm");
    }
    up.vec(l.ffn_norm, c.dim, d.ffn_norm, "ffn_norm");
    char* gu = static_cast<char*>(d.wgu);
    up.rows(l.w_gate, c.hidden_dim, c.dim, gu, w.ld_dim, 2 * w.ld_dim, "w_gate");
    up.rows(l.w_up, c.hidden_dim, c.dim, gu + static_cast<std::size_t>(w.ld_dim) * es, w.ld_dim, 2 * w.ld_dim, "w_up");
    up.rows(l.w_down, c.dim, c.hidden_dim, d.wdown, w.ld_hidden, w.ld_hidden, "w_down");
  }
  up.vec(mw.output_norm, c.dim, w.output_norm, "output_norm");
  if (!c.tied_embeddings) up.rows(mw.output, c.vocab_size, c.dim, w.output, w.ld_dim, w.ld_dim, "output");
}

void random_weights(DeviceWeights& w, std::uint64_t seed) {
  const ModelConfig& c = w.config;
  std::uint64_t tensor = 0;
  auto mat = [&](void* dst, int rows, int cols, int ld) {
    kernels::random_rows(w.wtype, dst, rows, cols, ld, seed * 0x100000001b3ull + (++tensor), std::sqrt(3.0f / cols), 0.0f,
                         nullptr);
  };
  auto gain = [&](void* dst, int n) {
    kernels::random_rows(w.wtype, dst, 1, n, padded_ld(n), seed * 0x100000001b3ull + (++tensor), 0.1f, 1.0f, nullptr);
  };
  mat(w.tok_embd, c.vocab_size, c.dim, w.ld_dim);
  for (auto& l : w.layers) {
    gain(l.attn_norm, c.dim);
    mat(l.wqkv, c.q_dim() + 2 * c.kv_dim(), c.dim, w.ld_dim);
    mat(l.wo, c.dim, c.q_dim(), w.ld_q);
    if (c.qk_norm) {
      gain(l.q_norm, c.head_dim);
      gain(l.k_norm, c.head_dim);
    }
    gain(l.ffn_norm, c.dim);
    mat(l.wgu, 2 * c.hidden_dim, c.dim, w.ld_dim);
    mat(l.wdown, c.dim, c.hidden_dim, w.ld_hidden);
  }
  gain(w.output_norm, c.dim);
  if (!c.tied_embeddings) mat(w.output, c.vocab_size, c.dim, w.ld_dim);
  ATLAS_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace atlas::engine::cuda
