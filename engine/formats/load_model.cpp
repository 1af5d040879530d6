// load_model: picks the format from the path (engine/model.hpp documents the rules).
#include <charconv>
#include <cstring>
#include <fstream>

#include "engine/error.hpp"
#include "engine/formats/load_for_backend.hpp"
#include "engine/formats/gguf.hpp"
#include "engine/formats/llama2c.hpp"
#include "engine/formats/presets.hpp"
#include "engine/formats/safetensors.hpp"
#include "engine/tokenizer/bpe.hpp"
#include "engine/tokenizer/spm.hpp"
#include "engine/model.hpp"

namespace atlas::engine {

namespace {

/// "preset:<name>[@seed]" (seed decimal, default 0).
Model load_preset(std::string_view spec, const LoadOptions& opts, bool with_weights) {
  std::string_view name = spec;
  std::uint64_t seed = 0;
  if (const auto at = spec.find('@'); at != std::string_view::npos) {
    name = spec.substr(0, at);
    const std::string_view s = spec.substr(at + 1);
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), seed);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size())
      throw EngineError("model 'preset:" + std::string(spec) + "': seed '" + std::string(s) + "' is not a non-negative integer");
  }
  return with_weights ? make_preset_model(name, seed, opts.max_seq_len) : make_preset_config_model(name, seed, opts.max_seq_len);
}

/// A llama2.c tokenizer beside the model: tokenizer.bin, else the only tok*.bin there. Empty when
/// there is none or several (load_llama2c then tries tok<vocab_size>.bin, else loads no tokenizer).
std::filesystem::path find_llama2c_tokenizer(const std::filesystem::path& model) {
  const auto dir = model.parent_path().empty() ? std::filesystem::path(".") : model.parent_path();
  if (std::filesystem::exists(dir / "tokenizer.bin")) return dir / "tokenizer.bin";
  std::vector<std::filesystem::path> found;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (e.is_regular_file() && n.rfind("tok", 0) == 0 && e.path().extension() == ".bin" && e.path() != model) found.push_back(e.path());
  }
  return found.size() == 1 ? found[0] : std::filesystem::path();
}

bool starts_with_gguf(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  return in.read(magic, 4) && std::memcmp(magic, "GGUF", 4) == 0;
}

}  // namespace

Model load_model(const std::filesystem::path& path, const LoadOptions& opts) {
  const std::string s = path.string();
  if (s.rfind("preset:", 0) == 0) return load_preset(std::string_view(s).substr(7), opts, true);
  if (std::filesystem::is_directory(path)) {
    if (!std::filesystem::exists(path / "config.json")) throw EngineError(s + ": a model directory needs config.json (Hugging Face layout)");
    return load_safetensors_model(path, opts);
  }
  if (!std::filesystem::exists(path)) throw EngineError(s + ": no such model file or directory");
  Model m;
  if (starts_with_gguf(path)) {
    m = load_gguf(path, opts);
    // --tokenizer wins over the file's own tokenizer, as for safetensors directories (it was
    // silently ignored for GGUF files, found by replaying other loaders' public bug reports): a tokenizer.json, else a llama2.c
    // tokenizer file read for the model's vocab_size. Its ids must fit the embedding.
    if (!opts.tokenizer_path.empty()) {
      m.tokenizer = opts.tokenizer_path.extension() == ".json" ? load_tokenizer_json(opts.tokenizer_path, m.config.vocab_size)
                                                               : load_llama2c_tokenizer(opts.tokenizer_path, m.config.vocab_size);
      m.source.metadata["tokenizer"] = opts.tokenizer_path.string();
    }
  } else if (looks_like_llama2c(path)) {
    const auto tok = opts.tokenizer_path.empty() ? find_llama2c_tokenizer(path) : opts.tokenizer_path;
    m = load_llama2c(path, tok, opts);
    m.source.format = "llama2c";
    if (!tok.empty()) m.source.metadata.emplace("tokenizer", tok.string());
  } else if (const auto want = llama2c_legacy_expected_size(path); want && *want > std::filesystem::file_size(path)) {
    throw EngineError(s + ": truncated llama2.c checkpoint? its header implies " + std::to_string(*want) +
                      " bytes, the file has " + std::to_string(std::filesystem::file_size(path)));
  } else {
    // A legacy llama2.c header has no magic: say what its fields would be wrong about (dims 0 or
    // negative, heads not dividing dim), so a corrupt checkpoint is not just "not a model".
    const auto why = llama2c_legacy_header_problem(path);
    throw EngineError(s + ": not a model file: no \"GGUF\" magic, and no llama2.c header (ak42 magic, or a legacy header matching the file size)" +
                      (why ? "; read as a legacy llama2.c header: " + *why : std::string()));
  }
  m.source.path = path;
  return m;
}

Model load_model_for_backend(const std::filesystem::path& path, const LoadOptions& opts, std::string_view backend) {
  const std::string s = path.string();
  // The CUDA backend draws a preset's weights on the device (the values make-model writes).
  if (backend == "cuda" && s.rfind("preset:", 0) == 0) return load_preset(std::string_view(s).substr(7), opts, false);
  return load_model(path, opts);
}

}  // namespace atlas::engine
