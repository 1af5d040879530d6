#include "engine/formats/gguf_writer.hpp"

#include <deque>

#include "engine/formats/qwen3_next_tensors.hpp"

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "common/machine_error.hpp"
#include "engine/error.hpp"
#include "engine/formats/gguf.hpp"

namespace atlas::engine {

void quantize_q8_0_block(const float* x, std::byte* out) {
  float amax = 0.0f;
  for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  const std::uint16_t dh = f32_to_f16(d);
  std::memcpy(out, &dh, 2);
  for (int j = 0; j < 32; ++j) out[2 + j] = static_cast<std::byte>(static_cast<std::int8_t>(std::lround(x[j] * id)));
}

namespace {

struct Tensor {
  std::string name;
  std::vector<std::int64_t> ne;  // GGUF order, ne0 first
  std::span<const float> values;
  DType dtype;
};

class Buf {
 public:
  template <class T>
  void put(T v) {
    s_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void str(const std::string& x) {
    put<std::uint64_t>(x.size());
    s_ += x;
  }
  void key(const std::string& k, GgufType t) {
    str(k);
    put<std::uint32_t>(static_cast<std::uint32_t>(t));
  }
  void kv_u32(const std::string& k, std::uint32_t v) { key(k, GgufType::uint32), put(v); }
  void kv_u64(const std::string& k, std::uint64_t v) { key(k, GgufType::uint64), put(v); }
  void kv_f32(const std::string& k, float v) { key(k, GgufType::float32), put(v); }
  void kv_str(const std::string& k, const std::string& v) { key(k, GgufType::string), str(v); }
  void kv_bool(const std::string& k, bool v) { key(k, GgufType::boolean), put<std::uint8_t>(v ? 1 : 0); }
  void kv_strings(const std::string& k, const std::vector<std::string>& v) {
    key(k, GgufType::array);
    put<std::uint32_t>(static_cast<std::uint32_t>(GgufType::string));
    put<std::uint64_t>(v.size());
    for (const auto& x : v) str(x);
  }
  void kv_i32s(const std::string& k, const std::vector<std::int32_t>& v) {
    key(k, GgufType::array);
    put<std::uint32_t>(static_cast<std::uint32_t>(GgufType::int32));
    put<std::uint64_t>(v.size());
    for (auto x : v) put(x);
  }
  std::string& data() { return s_; }

 private:
  std::string s_;
};

std::uint32_t ggml_type(DType t) {
  switch (t) {
    case DType::f32: return kGgmlF32;
    case DType::f16: return kGgmlF16;
    case DType::bf16: return kGgmlBF16;
    case DType::q8_0: return kGgmlQ8_0;
  }
  return kGgmlF32;
}

void encode(const Tensor& t, std::string& out) {
  const std::size_t n = t.values.size();
  switch (t.dtype) {
    case DType::f32:
      out.append(reinterpret_cast<const char*>(t.values.data()), n * 4);
      return;
    case DType::f16:
    case DType::bf16:
      for (float x : t.values) {
        const std::uint16_t h = t.dtype == DType::f16 ? f32_to_f16(x) : f32_to_bf16(x);
        out.append(reinterpret_cast<const char*>(&h), 2);
      }
      return;
    case DType::q8_0: {
      std::byte blk[34];
      for (std::size_t i = 0; i < n; i += 32) {
        quantize_q8_0_block(t.values.data() + i, blk);
        out.append(reinterpret_cast<const char*>(blk), 34);
      }
      return;
    }
  }
}

}  // namespace

void write_gguf(const std::filesystem::path& out, const Model& model, const GgufWriteOptions& opts) {
  const ModelConfig& c = model.config;
  const std::string arch = to_string(c.arch);
  if (c.arch == Arch::qwen3_next && (c.rope_layout != RopeLayout::half || !c.qk_norm))
    throw EngineError(out.string() + ": a GGUF qwen3next model implies RoPE half and q/k norms; this model differs");
  if (c.arch != Arch::qwen3_next && !c.is_dense())
    throw EngineError(out.string() + ": a GGUF " + arch + " model is all (attention, swiglu) blocks; this model has other kinds");
  if (c.arch != Arch::qwen3_next && ((c.arch == Arch::llama && c.rope_layout != RopeLayout::interleaved) || (c.arch == Arch::qwen3 && c.rope_layout != RopeLayout::half) ||
      c.qk_norm != (c.arch == Arch::qwen3)))
    throw EngineError(out.string() + ": a GGUF " + arch + " model implies RoPE " + (c.arch == Arch::llama ? "interleaved" : "half") +
                      (c.arch == Arch::qwen3 ? " and q/k norms" : " and no q/k norms") + "; this model differs");
  int interval = 0;  // qwen3next: the attention period of the block list (qwen3_next_blocks inverts it)
  if (c.arch == Arch::qwen3_next) {
    for (int l = 0; l < c.n_layers && interval == 0; ++l) if (c.block(l).mixer != MixerKind::gated_deltanet) interval = l + 1;
    if (c.blocks != qwen3_next_blocks(c.n_layers, interval))
      throw EngineError(out.string() + ": GGUF qwen3next expresses only gated_deltanet / gated_attention layers by one full_attention_interval "
                        "with a moe ffn on every layer; this model's layer kinds differ");
  }
  if (opts.alignment == 0 || (opts.alignment & (opts.alignment - 1)) != 0)
    throw EngineError(out.string() + ": alignment " + std::to_string(opts.alignment) + " is not a power of two");

  const std::int64_t dim = c.dim, hid = c.hidden_dim, vocab = c.vocab_size, qd = c.q_dim(), kvd = c.kv_dim(), hd = c.head_dim;
  const ModelWeights& w = model.weights;
  std::vector<Tensor> ts;
  std::deque<std::vector<float>> scratch;  // reordered copies the tensors point into (a deque never moves them)
  // A typed (bf16 / f16) weight is written from a float32 copy, re-encoded as opts.dtype.
  auto f32 = [&](const Weight& v) -> std::span<const float> {
    if (v.is_f32()) return v;
    auto& buf = scratch.emplace_back(v.size());
    v.to_f32(0, v.size(), buf.data());
    return buf;
  };
  // Experts (one Weight each) stacked into one float32 tensor, expert 0 first (llama.cpp's *_exps).
  auto stacked = [&](const std::vector<Weight>& experts) -> std::span<const float> {
    std::size_t total = 0;
    for (const auto& x : experts) total += x.size();
    auto& buf = scratch.emplace_back(total);
    std::size_t at = 0;
    for (const auto& x : experts) {
      x.to_f32(0, x.size(), buf.data() + at);
      at += x.size();
    }
    return buf;
  };
  auto mat = [&](std::string name, const Weight& v, std::int64_t rows, std::int64_t cols) {
    ts.push_back({std::move(name), {cols, rows}, f32(v), opts.dtype});
  };
  auto vec = [&](std::string name, const Weight& v, std::int64_t n) { ts.push_back({std::move(name), {n}, f32(v), DType::f32}); };
  mat("token_embd.weight", w.tok_embd, vocab, dim);
  vec("output_norm.weight", w.output_norm, dim);
  if (!c.tied_embeddings) mat("output.weight", w.output, vocab, dim);
  for (int l = 0; l < c.n_layers && c.arch == Arch::qwen3_next; ++l) {
    // llama.cpp qwen3next layout (src/models/qwen3next.cpp load_arch_tensors), legacy fused ssm_in.
    const std::string p = "blk." + std::to_string(l) + ".";
    const LayerWeights& L = w.layers.at(static_cast<std::size_t>(l));
    const BlockKind k = c.block(l);
    vec(p + "attn_norm.weight", L.attn_norm, dim);
    vec(p + "post_attention_norm.weight", L.ffn_norm, dim);
    if (k.mixer == MixerKind::gated_deltanet) {
      if (opts.qwen3next_split_qkv) {
        auto& qkv = scratch.emplace_back(static_cast<std::size_t>(c.gdn_conv_dim()) * static_cast<std::size_t>(dim));
        auto& gate = scratch.emplace_back(static_cast<std::size_t>(c.gdn_value_dim()) * static_cast<std::size_t>(dim));
        if (L.gdn.in_qkvz.size() == static_cast<std::size_t>(c.gdn_qkvz_dim()) * static_cast<std::size_t>(dim))
          qkvz_split_from_grouped(c, f32(L.gdn.in_qkvz).data(), qkv.data(), gate.data());
        mat(p + "attn_qkv.weight", std::span<const float>(qkv), c.gdn_conv_dim(), dim);
        mat(p + "attn_gate.weight", std::span<const float>(gate), c.gdn_value_dim(), dim);
      } else {
        mat(p + "ssm_in.weight", L.gdn.in_qkvz, c.gdn_qkvz_dim(), dim);
      }
      mat(p + "ssm_ba.weight", L.gdn.in_ba, 2LL * c.gdn_v_heads, dim);
      ts.push_back({p + "ssm_conv1d.weight", {c.gdn_conv_kernel, c.gdn_conv_dim()}, f32(L.gdn.conv1d), DType::f32});
      vec(p + "ssm_dt.bias", L.gdn.dt_bias, c.gdn_v_heads);
      vec(p + "ssm_a", L.gdn.a, c.gdn_v_heads);
      vec(p + "ssm_norm.weight", L.gdn.norm, c.gdn_v_head_dim);
      mat(p + "ssm_out.weight", L.gdn.out, dim, c.gdn_value_dim());
    } else {
      mat(p + "attn_q.weight", L.wq, (k.mixer == MixerKind::gated_attention ? 2 : 1) * qd, dim);
      mat(p + "attn_k.weight", L.wk, kvd, dim);
      mat(p + "attn_v.weight", L.wv, kvd, dim);
      mat(p + "attn_output.weight", L.wo, dim, qd);
      vec(p + "attn_q_norm.weight", L.q_norm, hd);
      vec(p + "attn_k_norm.weight", L.k_norm, hd);
    }
    const std::int64_t e = c.n_experts, eh = c.expert_hidden_dim, sh = c.shared_expert_hidden_dim;
    mat(p + "ffn_gate_inp.weight", L.moe.router, e, dim);
    ts.push_back({p + "ffn_gate_exps.weight", {dim, eh, e}, stacked(L.moe.gate_exps), opts.dtype});
    ts.push_back({p + "ffn_up_exps.weight", {dim, eh, e}, stacked(L.moe.up_exps), opts.dtype});
    ts.push_back({p + "ffn_down_exps.weight", {eh, dim, e}, stacked(L.moe.down_exps), opts.dtype});
    if (sh > 0) {
      vec(p + "ffn_gate_inp_shexp.weight", L.moe.shared_gate, dim);
      mat(p + "ffn_gate_shexp.weight", L.moe.gate_shexp, sh, dim);
      mat(p + "ffn_up_shexp.weight", L.moe.up_shexp, sh, dim);
      mat(p + "ffn_down_shexp.weight", L.moe.down_shexp, dim, sh);
    }
  }
  for (int l = 0; l < c.n_layers && c.arch != Arch::qwen3_next; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    const LayerWeights& L = w.layers.at(static_cast<std::size_t>(l));
    vec(p + "attn_norm.weight", L.attn_norm, dim);
    mat(p + "attn_q.weight", L.wq, qd, dim);
    mat(p + "attn_k.weight", L.wk, kvd, dim);
    mat(p + "attn_v.weight", L.wv, kvd, dim);
    mat(p + "attn_output.weight", L.wo, dim, qd);
    if (c.qk_norm) {
      vec(p + "attn_q_norm.weight", L.q_norm, hd);
      vec(p + "attn_k_norm.weight", L.k_norm, hd);
    }
    vec(p + "ffn_norm.weight", L.ffn_norm, dim);
    mat(p + "ffn_gate.weight", L.w_gate, hid, dim);
    mat(p + "ffn_up.weight", L.w_up, hid, dim);
    mat(p + "ffn_down.weight", L.w_down, dim, hid);
  }
  for (const auto& t : ts) {
    std::int64_t n = 1;
    for (auto d : t.ne) n *= d;
    if (static_cast<std::int64_t>(t.values.size()) != n)
      throw EngineError(out.string() + ": tensor " + t.name + " has " + std::to_string(t.values.size()) + " values, its shape needs " + std::to_string(n));
    if (t.dtype == DType::q8_0 && t.ne[0] % 32 != 0)
      throw EngineError(out.string() + ": tensor " + t.name + " row length " + std::to_string(t.ne[0]) + " is not a multiple of 32 (Q8_0 block)");
  }

  Buf h;
  h.data() = "GGUF";
  h.put<std::uint32_t>(3);
  h.put<std::uint64_t>(ts.size());
  const bool preset = model.source.format == "preset";
  const bool next = c.arch == Arch::qwen3_next;
  std::uint64_t n_kv = 16 + (preset ? 2 : 0) + (next ? 11 : 0) + (opts.tokenizer ? 0 : 1);
  std::vector<std::string> tok_tokens, tok_merges;
  std::vector<std::int32_t> tok_types;
  if (opts.tokenizer) {
    const BpeVocab& v = *opts.tokenizer;
    if (v.add_prefix_space) throw EngineError(out.string() + ": GGUF gpt2 tokenizers have no add_prefix_space; this tokenizer needs it");
    tok_tokens.resize(static_cast<std::size_t>(c.vocab_size));
    tok_types.assign(static_cast<std::size_t>(c.vocab_size), 5);
    auto place = [&](int id, const std::string& text, std::int32_t type) {
      if (id < 0 || id >= c.vocab_size)
        throw EngineError(out.string() + ": tokenizer id " + std::to_string(id) + " (\"" + text + "\") is outside the model's vocab_size " + std::to_string(c.vocab_size));
      tok_tokens[static_cast<std::size_t>(id)] = text;
      tok_types[static_cast<std::size_t>(id)] = type;
    };
    for (std::size_t i = 0; i < v.tokens.size(); ++i) {
      if (!v.tokens[i].empty()) place(static_cast<int>(i), v.tokens[i], 1);
    }
    for (const auto& a : v.added) place(a.id, a.content, a.special ? 3 : 4);
    for (std::size_t i = 0; i < tok_tokens.size(); ++i) {
      if (tok_tokens[i].empty()) tok_tokens[i] = "[PAD" + std::to_string(i) + "]";
    }
    for (const auto& [l, r] : v.merges) tok_merges.push_back(l + " " + r);
    n_kv += 6 + (v.bos ? 1 : 0) + (v.eos ? 1 : 0);  // model, pre, tokens, token_type, merges, add_bos_token
  }
  h.put<std::uint64_t>(n_kv);
  h.kv_str("general.architecture", arch);
  h.kv_str("general.name", c.name);
  h.kv_u32("general.alignment", static_cast<std::uint32_t>(opts.alignment));
  // llama_ftype: 0 all F32, 1 mostly F16, 7 mostly Q8_0, 32 mostly BF16.
  const std::uint32_t ftype = opts.dtype == DType::f32 ? 0 : opts.dtype == DType::f16 ? 1 : opts.dtype == DType::q8_0 ? 7 : 32;
  h.kv_u32("general.file_type", ftype);
  h.kv_u32(arch + ".context_length", static_cast<std::uint32_t>(c.max_seq_len));
  h.kv_u32(arch + ".embedding_length", static_cast<std::uint32_t>(c.dim));
  h.kv_u32(arch + ".feed_forward_length", static_cast<std::uint32_t>(c.hidden_dim));
  h.kv_u32(arch + ".block_count", static_cast<std::uint32_t>(c.n_layers));
  h.kv_u32(arch + ".attention.head_count", static_cast<std::uint32_t>(c.n_heads));
  h.kv_u32(arch + ".attention.head_count_kv", static_cast<std::uint32_t>(c.n_kv_heads));
  h.kv_u32(arch + ".attention.key_length", static_cast<std::uint32_t>(c.head_dim));
  h.kv_u32(arch + ".attention.value_length", static_cast<std::uint32_t>(c.head_dim));
  h.kv_f32(arch + ".attention.layer_norm_rms_epsilon", c.rms_eps);
  h.kv_f32(arch + ".rope.freq_base", c.rope_theta);
  h.kv_u32(arch + ".rope.dimension_count", static_cast<std::uint32_t>(c.rot_dim()));
  h.kv_u32(arch + ".vocab_size", static_cast<std::uint32_t>(c.vocab_size));
  if (next) {  // llama.cpp qwen3next keys (convert_hf_to_gguf.py Qwen3NextModel / Qwen2MoeModel)
    h.kv_u32(arch + ".ssm.conv_kernel", static_cast<std::uint32_t>(c.gdn_conv_kernel));
    h.kv_u32(arch + ".ssm.state_size", static_cast<std::uint32_t>(c.gdn_k_head_dim));
    h.kv_u32(arch + ".ssm.group_count", static_cast<std::uint32_t>(c.gdn_k_heads));
    h.kv_u32(arch + ".ssm.time_step_rank", static_cast<std::uint32_t>(c.gdn_v_heads));
    h.kv_u32(arch + ".ssm.inner_size", static_cast<std::uint32_t>(c.gdn_value_dim()));
    h.kv_u32(arch + ".full_attention_interval", static_cast<std::uint32_t>(interval));
    h.kv_u32(arch + ".expert_count", static_cast<std::uint32_t>(c.n_experts));
    h.kv_u32(arch + ".expert_used_count", static_cast<std::uint32_t>(c.n_experts_used));
    h.kv_u32(arch + ".expert_feed_forward_length", static_cast<std::uint32_t>(c.expert_hidden_dim));
    h.kv_u32(arch + ".expert_shared_feed_forward_length", static_cast<std::uint32_t>(c.shared_expert_hidden_dim));
    h.kv_bool(arch + ".expert_weights_norm", c.norm_topk_prob);
  }
  if (preset) {
    h.kv_str("atlas.preset", model.source.preset);
    h.kv_u64("atlas.seed", model.source.seed);
  }
  if (!opts.tokenizer) {
    // llama.cpp's marker for a model without a vocabulary (LLAMA_VOCAB_TYPE_NONE, vocab_size
    // dummy tokens): llama.cpp then loads the file and runs token ids.
    h.kv_str("tokenizer.ggml.model", "none");
  }
  if (opts.tokenizer) {
    const BpeVocab& v = *opts.tokenizer;
    h.kv_str("tokenizer.ggml.model", "gpt2");
    // llama.cpp's names (llama-vocab.cpp): it knows "gpt-2", and refuses "gpt2" as an unknown
    // pre-tokenizer; our reader takes both.
    h.kv_str("tokenizer.ggml.pre", v.pre == PreTokenizer::qwen2 ? "qwen2" : v.pre == PreTokenizer::llama3 ? "llama-bpe" : "gpt-2");
    h.kv_strings("tokenizer.ggml.tokens", tok_tokens);
    h.kv_i32s("tokenizer.ggml.token_type", tok_types);
    h.kv_strings("tokenizer.ggml.merges", tok_merges);
    if (v.bos) h.kv_u32("tokenizer.ggml.bos_token_id", static_cast<std::uint32_t>(*v.bos));
    if (v.eos) h.kv_u32("tokenizer.ggml.eos_token_id", static_cast<std::uint32_t>(*v.eos));
    h.kv_bool("tokenizer.ggml.add_bos_token", v.bos.has_value());
  }
  std::uint64_t offset = 0;
  std::vector<std::uint64_t> offsets;
  for (const auto& t : ts) {
    h.str(t.name);
    h.put<std::uint32_t>(static_cast<std::uint32_t>(t.ne.size()));
    for (auto d : t.ne) h.put<std::int64_t>(d);
    h.put<std::uint32_t>(ggml_type(t.dtype));
    h.put<std::uint64_t>(offset);
    offsets.push_back(offset);
    offset += static_cast<std::uint64_t>(*storage_bytes(t.dtype, static_cast<std::int64_t>(t.values.size())));
    offset = (offset + opts.alignment - 1) / opts.alignment * opts.alignment;
  }
  auto pad = [&](std::string& s, std::uint64_t base) { s.append((opts.alignment - (base + s.size()) % opts.alignment) % opts.alignment, '\0'); };
  pad(h.data(), 0);

  const auto tmp = out.parent_path() / (out.filename().string() + ".tmp." + std::to_string(::getpid()));
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw EngineError(tmp.string() + ": cannot open for writing");
    f.write(h.data().data(), static_cast<std::streamsize>(h.data().size()));
    std::string chunk;
    std::uint64_t written = 0;
    for (std::size_t i = 0; i < ts.size(); ++i) {
      chunk.clear();
      encode(ts[i], chunk);
      written += chunk.size();
      if (i + 1 < ts.size()) {
        chunk.append(static_cast<std::size_t>(offsets[i + 1] - written), '\0');
        written = offsets[i + 1];
      }
      f.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    }
    f.flush();
    if (!f) {
      std::filesystem::remove(tmp);
      throw EngineError(tmp.string() + ": write failed");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, out, ec);
  if (ec) {
    std::filesystem::remove(tmp);
    throw_errno_error<EngineError>(out.string() + ": rename from " + tmp.string() + " failed", ec);
  }
}

}  // namespace atlas::engine
