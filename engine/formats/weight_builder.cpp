#include "engine/formats/weight_builder.hpp"

#include <algorithm>
#include <cmath>
#include <atomic>
#include <memory>
#include <thread>

#include "engine/error.hpp"
#include "engine/formats/qwen3_next_tensors.hpp"

namespace atlas::engine {

std::int64_t TensorView::elements() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

namespace {

std::string shape_str(const std::vector<std::int64_t>& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

struct Need {
  std::string name;
  std::vector<std::int64_t> shape;
  Weight* slot;
  std::vector<Weight>* experts = nullptr;  ///< a stacked [n_experts][rows][cols] tensor: one view per expert instead of slot
};

/// Matrices the CPU matmul reads (and the embedding, read a row at a time) stay in the file's
/// bf16 / f16 / Q8_0 bytes (Q8_0 when a row is whole blocks); vectors (norms, biases, A) and the
/// depthwise conv kernel become float32.
bool keep_typed(const Need& need, DType t) {
  if (need.shape.size() < 2 || need.name.ends_with("ssm_conv1d.weight")) return false;
  return t == DType::bf16 || t == DType::f16 || (t == DType::q8_0 && need.shape.back() % block_elements(DType::q8_0) == 0);
}

bool f32_in_place(DType t, std::span<const std::byte> data) {
  return t == DType::f32 && reinterpret_cast<std::uintptr_t>(data.data()) % alignof(float) == 0;
}

}  // namespace

void validate_blocks(const ModelConfig& c, const std::filesystem::path& file) {
  const std::string f = file.string() + ": ";
  if (!c.blocks.empty() && c.blocks.size() != static_cast<std::size_t>(c.n_layers))
    throw EngineError(f + "the layer list has " + std::to_string(c.blocks.size()) + " entries, n_layers is " + std::to_string(c.n_layers));
  bool gdn = false, moe = false, gated = false;
  for (const auto& b : c.blocks) {
    gdn |= b.mixer == MixerKind::gated_deltanet;
    gated |= b.mixer == MixerKind::gated_attention;
    moe |= b.ffn == FfnKind::moe;
  }
  auto positive = [&](const char* field, long long v) {
    if (v <= 0) throw EngineError(f + field + " = " + std::to_string(v) + " (must be > 0)");
  };
  if (c.rope_dim < 0 || c.rope_dim > c.head_dim || c.rope_dim % 2 != 0)
    throw EngineError(f + "rope_dim = " + std::to_string(c.rope_dim) + " (must be even and within head_dim " + std::to_string(c.head_dim) + ")");
  if (gated && !c.qk_norm) throw EngineError(f + "gated_attention layers need q/k norms (qk_norm)");
  if (gdn) {
    positive("linear_num_key_heads", c.gdn_k_heads);
    positive("linear_num_value_heads", c.gdn_v_heads);
    positive("linear_key_head_dim", c.gdn_k_head_dim);
    positive("linear_value_head_dim", c.gdn_v_head_dim);
    positive("linear_conv_kernel_dim", c.gdn_conv_kernel);
    if (c.gdn_v_heads % c.gdn_k_heads != 0)
      throw EngineError(f + "linear_num_value_heads " + std::to_string(c.gdn_v_heads) + " is not a multiple of linear_num_key_heads " +
                        std::to_string(c.gdn_k_heads) + " (each key head must serve a whole number of value heads)");
  }
  if (moe) {
    positive("num_experts", c.n_experts);
    positive("num_experts_per_tok", c.n_experts_used);
    positive("moe_intermediate_size", c.expert_hidden_dim);
    if (c.n_experts_used > c.n_experts)
      throw EngineError(f + "num_experts_per_tok = " + std::to_string(c.n_experts_used) + " exceeds num_experts = " + std::to_string(c.n_experts));
    if (c.shared_expert_hidden_dim < 0)
      throw EngineError(f + "shared_expert_intermediate_size = " + std::to_string(c.shared_expert_hidden_dim) + " (must be >= 0)");
  }
}

/// Bound on a derived int width (a product of two config fields): 2^28, beyond any real model
/// (Qwen3-Next-80B's widest, the 512 experts x 512, is 2^18) and small enough that a sum of four
/// stays an int.
constexpr long long kMaxDerivedWidth = 1LL << 28;

void validate_config(const ModelConfig& c, const std::filesystem::path& file) {
  auto positive = [&](const char* field, long long v) {
    if (v <= 0) throw EngineError(file.string() + ": " + field + " = " + std::to_string(v) + " (must be > 0)");
  };
  positive("dim", c.dim);
  // The dense FFN size is needed only by swiglu blocks (no blocks listed: every layer is dense).
  bool dense_ffn = c.blocks.empty();
  for (const BlockKind& b : c.blocks) dense_ffn = dense_ffn || b.ffn == FfnKind::swiglu;
  if (dense_ffn) positive("hidden_dim", c.hidden_dim);
  positive("n_layers", c.n_layers);
  positive("n_heads", c.n_heads);
  positive("n_kv_heads", c.n_kv_heads);
  positive("head_dim", c.head_dim);
  positive("vocab_size", c.vocab_size);
  positive("max_seq_len", c.max_seq_len);
  if (c.n_heads % c.n_kv_heads != 0)
    throw EngineError(file.string() + ": n_heads " + std::to_string(c.n_heads) + " is not a multiple of n_kv_heads " +
                      std::to_string(c.n_kv_heads));
  if (c.head_dim % 2 != 0) throw EngineError(file.string() + ": head_dim = " + std::to_string(c.head_dim) + " (RoPE needs it even)");
  if (!(c.rms_eps > 0.0f) || !(c.rope_theta > 0.0f) || !std::isfinite(c.rms_eps) || !std::isfinite(c.rope_theta))
    throw EngineError(file.string() + ": rms_eps = " + std::to_string(c.rms_eps) + ", rope_theta = " + std::to_string(c.rope_theta) +
                      " (must be finite and > 0)");
  // Derived widths (q_dim = n_heads * head_dim, the GDN key/value/conv widths, ...) are int and are
  // summed up to 4 at a time (the grouped q/k/v/z rows): bound every product before anything
  // computes them (a GGUF with n_heads 587,202,562 and head_dim 4 overflowed q_dim; fuzz_gguf).
  auto width = [&](const char* a_name, long long a, const char* b_name, long long b) {
    if (a > 0 && b > 0 && a * b > kMaxDerivedWidth)
      throw EngineError(file.string() + ": " + a_name + " * " + b_name + " = " + std::to_string(a) + " * " + std::to_string(b) +
                        " is too large (at most " + std::to_string(kMaxDerivedWidth) + ")");
  };
  width("n_heads", c.n_heads, "head_dim", c.head_dim);
  width("n_kv_heads", c.n_kv_heads, "head_dim", c.head_dim);
  width("linear_num_key_heads", c.gdn_k_heads, "linear_key_head_dim", c.gdn_k_head_dim);
  width("linear_num_value_heads", c.gdn_v_heads, "linear_value_head_dim", c.gdn_v_head_dim);
  width("num_experts", c.n_experts, "moe_intermediate_size", c.expert_hidden_dim);
  validate_blocks(c, file);
  // The largest matrices must stay addressable: elements fit comfortably in int64.
  const long long big = static_cast<long long>(c.vocab_size) * c.dim;
  if (big / c.dim != c.vocab_size || static_cast<long long>(c.hidden_dim) * c.dim > (1LL << 40))
    throw EngineError(file.string() + ": dimensions too large (dim " + std::to_string(c.dim) + ", vocab " + std::to_string(c.vocab_size) + ")");
}

void run_convert_jobs(std::span<const ConvertJob> jobs) {
  // Split into chunks of at most 1 Mi elements on block boundaries, then let threads pull them.
  constexpr std::int64_t chunk = 1 << 20;  // a multiple of every block size (32)
  std::vector<ConvertJob> chunks;
  for (const auto& j : jobs) {
    const std::int64_t n = static_cast<std::int64_t>(j.dst.size());
    const std::int64_t bpe_num = block_bytes(j.dtype), bpe_den = block_elements(j.dtype);
    for (std::int64_t off = 0; off < n; off += chunk) {
      const std::int64_t len = std::min(chunk, n - off);
      chunks.push_back({j.dtype, j.src.subspan(static_cast<std::size_t>(off / bpe_den * bpe_num), static_cast<std::size_t>(len / bpe_den * bpe_num)),
                        j.dst.subspan(static_cast<std::size_t>(off), static_cast<std::size_t>(len))});
    }
  }
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const unsigned n_threads = static_cast<unsigned>(std::min<std::size_t>(hw, chunks.size()));
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < chunks.size();) dequantize(chunks[i].dtype, chunks[i].src, chunks[i].dst);
  };
  std::vector<std::jthread> pool;
  for (unsigned t = 1; t < n_threads; ++t) pool.emplace_back(worker);
  worker();
}

std::vector<std::string> assemble_weights(Model& model, const TensorTable& tensors, const std::filesystem::path& file,
                      const std::function<std::string(const std::string&)>& file_name) {
  auto fname = [&](const std::string& n) { return file_name ? file_name(n) : n; };
  ModelConfig& c = model.config;
  ModelWeights& w = model.weights;
  const std::int64_t dim = c.dim, hid = c.hidden_dim, vocab = c.vocab_size, qd = c.q_dim(), kvd = c.kv_dim(), hd = c.head_dim;
  // Every layer owns tensors: a layer count beyond the tensor count is a bad header, and
  // allocating for it first (block_count 2^31 - 1) would exhaust memory (found by fuzz_gguf).
  if (static_cast<std::size_t>(c.n_layers) > tensors.size())
    throw EngineError(file.string() + ": " + std::to_string(c.n_layers) + " layers configured, but only " + std::to_string(tensors.size()) +
                      " tensors are present");
  w.layers.assign(static_cast<std::size_t>(c.n_layers), LayerWeights{});

  c.tied_embeddings = tensors.find("output.weight") == tensors.end();
  std::vector<Need> needs;
  needs.push_back({"token_embd.weight", {vocab, dim}, &w.tok_embd});
  needs.push_back({"output_norm.weight", {dim}, &w.output_norm});
  if (!c.tied_embeddings) needs.push_back({"output.weight", {vocab, dim}, &w.output});
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    LayerWeights& L = w.layers[static_cast<std::size_t>(l)];
    const BlockKind kind = c.block(l);
    needs.push_back({p + "attn_norm.weight", {dim}, &L.attn_norm});
    switch (kind.mixer) {
      case MixerKind::attention:
      case MixerKind::gated_attention: {
        const std::int64_t q_rows = kind.mixer == MixerKind::gated_attention ? 2 * qd : qd;
        needs.push_back({p + "attn_q.weight", {q_rows, dim}, &L.wq});
        needs.push_back({p + "attn_k.weight", {kvd, dim}, &L.wk});
        needs.push_back({p + "attn_v.weight", {kvd, dim}, &L.wv});
        needs.push_back({p + "attn_output.weight", {dim, qd}, &L.wo});
        if (c.qk_norm) {
          needs.push_back({p + "attn_q_norm.weight", {hd}, &L.q_norm});
          needs.push_back({p + "attn_k_norm.weight", {hd}, &L.k_norm});
        }
        break;
      }
      case MixerKind::gated_deltanet: {
        const std::int64_t vh = c.gdn_v_heads;
        needs.push_back({p + "ssm_in.weight", {c.gdn_qkvz_dim(), dim}, &L.gdn.in_qkvz});
        needs.push_back({p + "ssm_ba.weight", {2 * vh, dim}, &L.gdn.in_ba});
        needs.push_back({p + "ssm_conv1d.weight", {c.gdn_conv_dim(), c.gdn_conv_kernel}, &L.gdn.conv1d});
        needs.push_back({p + "ssm_dt.bias", {vh}, &L.gdn.dt_bias});
        needs.push_back({p + "ssm_a", {vh}, &L.gdn.a});
        needs.push_back({p + "ssm_norm.weight", {c.gdn_v_head_dim}, &L.gdn.norm});
        needs.push_back({p + "ssm_out.weight", {dim, c.gdn_value_dim()}, &L.gdn.out});
        break;
      }
    }
    // Qwen3-Next GGUF names the ffn's input norm post_attention_norm (HF post_attention_layernorm).
    needs.push_back({p + (c.arch == Arch::qwen3_next ? "post_attention_norm.weight" : "ffn_norm.weight"), {dim}, &L.ffn_norm});
    switch (kind.ffn) {
      case FfnKind::swiglu:
        needs.push_back({p + "ffn_gate.weight", {hid, dim}, &L.w_gate});
        needs.push_back({p + "ffn_up.weight", {hid, dim}, &L.w_up});
        needs.push_back({p + "ffn_down.weight", {dim, hid}, &L.w_down});
        break;
      case FfnKind::moe: {
        const std::int64_t e = c.n_experts, eh = c.expert_hidden_dim, sh = c.shared_expert_hidden_dim;
        needs.push_back({p + "ffn_gate_inp.weight", {e, dim}, &L.moe.router});
        needs.push_back({p + "ffn_gate_exps.weight", {e, eh, dim}, nullptr, &L.moe.gate_exps});
        needs.push_back({p + "ffn_up_exps.weight", {e, eh, dim}, nullptr, &L.moe.up_exps});
        needs.push_back({p + "ffn_down_exps.weight", {e, dim, eh}, nullptr, &L.moe.down_exps});
        if (sh > 0) {
          needs.push_back({p + "ffn_gate_inp_shexp.weight", {dim}, &L.moe.shared_gate});
          needs.push_back({p + "ffn_gate_shexp.weight", {sh, dim}, &L.moe.gate_shexp});
          needs.push_back({p + "ffn_up_shexp.weight", {sh, dim}, &L.moe.up_shexp});
          needs.push_back({p + "ffn_down_shexp.weight", {dim, sh}, &L.moe.down_shexp});
        }
        break;
      }
    }
  }

  // Validate everything before allocating, and size the float32 buffer for converted tensors.
  std::vector<const TensorView*> views;
  std::int64_t convert_total = 0;
  for (const auto& need : needs) {
    auto it = tensors.find(need.name);
    if (it == tensors.end()) throw EngineError(file.string() + ": tensor " + fname(need.name) + " is missing");
    const TensorView& t = it->second;
    if (t.shape != need.shape)
      throw EngineError(file.string() + ": tensor " + fname(need.name) + " has shape " + shape_str(t.shape) + ", expected " + shape_str(need.shape));
    // A tensor is one span of the file, or (Hugging Face per-expert / fused experts) one span per expert.
    const std::int64_t n_parts = t.parts.empty() ? 1 : static_cast<std::int64_t>(t.parts.size());
    if (!t.parts.empty() && (!need.experts || n_parts != need.shape.front()))
      throw EngineError(file.string() + ": tensor " + fname(need.name) + " is given as " + std::to_string(n_parts) + " parts, expected " +
                        (need.experts ? std::to_string(need.shape.front()) + " experts" : std::string("one tensor")));
    const auto bytes = storage_bytes(t.dtype, t.elements() / n_parts);
    for (std::int64_t k = 0; k < n_parts; ++k) {
      const auto data = t.parts.empty() ? t.data : t.parts[static_cast<std::size_t>(k)];
      const auto want = t.parts.empty() ? storage_bytes(t.dtype, t.elements()) : bytes;
      if (!want || static_cast<std::int64_t>(data.size()) != *want)
        throw EngineError(file.string() + ": tensor " + fname(need.name) + (t.parts.empty() ? "" : " (expert " + std::to_string(k) + ")") + " holds " +
                          std::to_string(data.size()) + " bytes, " + to_string(t.dtype) + " " + shape_str(t.shape) + " needs " +
                          (want ? std::to_string(*want) : std::string("a whole number of blocks")));
      if (!f32_in_place(t.dtype, data) && !keep_typed(need, t.dtype)) convert_total += t.elements() / n_parts;
    }
    views.push_back(&t);
  }

  std::shared_ptr<float[]> buffer;
  if (convert_total > 0) {
    buffer = std::make_unique_for_overwrite<float[]>(static_cast<std::size_t>(convert_total));
    model.keep_alive(buffer);
  }
  std::vector<ConvertJob> jobs;
  std::int64_t used = 0;
  // One span of stored elements as the engine holds it: in place (float32, or typed over the
  // mapping) or converted to float32 into the model's buffer.
  auto place = [&](const Need& need, DType t, std::span<const std::byte> data, std::size_t n) -> Weight {
    if (f32_in_place(t, data)) return std::span<const float>(reinterpret_cast<const float*>(data.data()), n);
    if (keep_typed(need, t)) return Weight::stored(t, data, n);  // in place in the file mapping
    std::span<float> dst(buffer.get() + used, n);
    used += static_cast<std::int64_t>(n);
    jobs.push_back({t, data, dst});
    return dst;
  };
  for (std::size_t i = 0; i < needs.size(); ++i) {
    const TensorView& t = *views[i];
    const Need& need = needs[i];
    const auto n = static_cast<std::size_t>(t.elements());
    if (!need.experts) {
      *need.slot = place(need, t.dtype, t.data, n);
    } else if (!t.parts.empty()) {
      need.experts->clear();
      for (const auto& part : t.parts) need.experts->push_back(place(need, t.dtype, part, n / t.parts.size()));
    } else {
      *need.experts = split_experts(place(need, t.dtype, t.data, n), static_cast<int>(need.shape.front()));
    }
  }
  run_convert_jobs(jobs);
  if (c.tied_embeddings) w.output = w.tok_embd;
  std::vector<std::string> unused;
  for (const auto& [name, t] : tensors) {
    if (std::none_of(needs.begin(), needs.end(), [&](const Need& n) { return n.name == name; })) unused.push_back(fname(name));
  }
  return unused;
}

}  // namespace atlas::engine
