#include "engine/formats/weight_builder.hpp"

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>

#include "engine/error.hpp"

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
  std::span<const float>* slot;
};

}  // namespace

void validate_config(const ModelConfig& c, const std::filesystem::path& file) {
  auto positive = [&](const char* field, long long v) {
    if (v <= 0) throw EngineError(file.string() + ": " + field + " = " + std::to_string(v) + " (must be > 0)");
  };
  positive("dim", c.dim);
  positive("hidden_dim", c.hidden_dim);
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
  if (!(c.rms_eps > 0.0f) || !(c.rope_theta > 0.0f))
    throw EngineError(file.string() + ": rms_eps = " + std::to_string(c.rms_eps) + ", rope_theta = " + std::to_string(c.rope_theta) +
                      " (must be > 0)");
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
  w.layers.assign(static_cast<std::size_t>(c.n_layers), LayerWeights{});

  c.tied_embeddings = tensors.find("output.weight") == tensors.end();
  std::vector<Need> needs;
  needs.push_back({"token_embd.weight", {vocab, dim}, &w.tok_embd});
  needs.push_back({"output_norm.weight", {dim}, &w.output_norm});
  if (!c.tied_embeddings) needs.push_back({"output.weight", {vocab, dim}, &w.output});
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    LayerWeights& L = w.layers[static_cast<std::size_t>(l)];
    needs.push_back({p + "attn_norm.weight", {dim}, &L.attn_norm});
    needs.push_back({p + "attn_q.weight", {qd, dim}, &L.wq});
    needs.push_back({p + "attn_k.weight", {kvd, dim}, &L.wk});
    needs.push_back({p + "attn_v.weight", {kvd, dim}, &L.wv});
    needs.push_back({p + "attn_output.weight", {dim, qd}, &L.wo});
    if (c.qk_norm) {
      needs.push_back({p + "attn_q_norm.weight", {hd}, &L.q_norm});
      needs.push_back({p + "attn_k_norm.weight", {hd}, &L.k_norm});
    }
    needs.push_back({p + "ffn_norm.weight", {dim}, &L.ffn_norm});
    needs.push_back({p + "ffn_gate.weight", {hid, dim}, &L.w_gate});
    needs.push_back({p + "ffn_up.weight", {hid, dim}, &L.w_up});
    needs.push_back({p + "ffn_down.weight", {dim, hid}, &L.w_down});
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
    const auto bytes = storage_bytes(t.dtype, t.elements());
    if (!bytes || static_cast<std::int64_t>(t.data.size()) != *bytes)
      throw EngineError(file.string() + ": tensor " + fname(need.name) + " holds " + std::to_string(t.data.size()) + " bytes, " + to_string(t.dtype) +
                        " " + shape_str(t.shape) + " needs " + (bytes ? std::to_string(*bytes) : std::string("a whole number of blocks")));
    const bool in_place = t.dtype == DType::f32 && reinterpret_cast<std::uintptr_t>(t.data.data()) % alignof(float) == 0;
    if (!in_place) convert_total += t.elements();
    views.push_back(&t);
  }

  std::shared_ptr<float[]> buffer;
  if (convert_total > 0) {
    buffer = std::make_unique_for_overwrite<float[]>(static_cast<std::size_t>(convert_total));
    model.keep_alive(buffer);
  }
  std::vector<ConvertJob> jobs;
  std::int64_t used = 0;
  for (std::size_t i = 0; i < needs.size(); ++i) {
    const TensorView& t = *views[i];
    const auto n = static_cast<std::size_t>(t.elements());
    if (t.dtype == DType::f32 && reinterpret_cast<std::uintptr_t>(t.data.data()) % alignof(float) == 0) {
      *needs[i].slot = {reinterpret_cast<const float*>(t.data.data()), n};
    } else {
      std::span<float> dst(buffer.get() + used, n);
      used += static_cast<std::int64_t>(n);
      jobs.push_back({t.dtype, t.data, dst});
      *needs[i].slot = dst;
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
