// atlas-bench make-model: writes a synthetic preset model (deterministic random weights at real
// dimensions) as a GGUF v3 file that load_model reads back, or (qwen3next presets, --format
// safetensors) as a Hugging Face directory.
#include <iostream>

#include "common/exit_code.hpp"
#include "engine/formats/gguf_writer.hpp"
#include "engine/formats/qwen3_next_hf_writer.hpp"
#include "engine/formats/presets.hpp"
#include "engine/tokenizer/synthetic_vocab.hpp"
#include "tools/atlas-bench/command.hpp"

namespace atlas::cli {
namespace {

struct MakeModelOptions {
  std::string arch;
  std::string preset;
  std::uint64_t seed = 0;
  std::string out;
  std::string dtype = "f32";
  int max_seq_len = 0;
  std::string tokenizer;
  std::string gdn_layout = "fused";
  std::string format = "gguf";
};

const RegisterCommand kMakeModel{Command{
    "make-model",
    "Write a synthetic preset model (deterministic random weights) as GGUF v3",
    [](CLI::App& sub, const GlobalOptions&) -> std::function<int()> {
      auto o = std::make_shared<MakeModelOptions>();
      std::vector<std::string> names;
      for (const auto& p : engine::presets()) names.push_back(p.name);
      sub.add_option("--arch", o->arch, "Architecture; picks tiny-<arch> when --preset is absent")->check(CLI::IsMember({"llama", "qwen3", "qwen3next"}));
      sub.add_option("--preset", o->preset, "Preset name")->check(CLI::IsMember(names));
      sub.add_option("--seed", o->seed, "Weight seed (same seed: byte-identical file)");
      sub.add_option("--out", o->out, "Output .gguf path (--format safetensors: a directory)")->required();
      sub.add_option("--format", o->format, "gguf, or safetensors (qwen3next presets: a Hugging Face directory, config.json + model.safetensors)")
          ->check(CLI::IsMember({"gguf", "safetensors"}));
      sub.add_option("--dtype", o->dtype, "Matrix storage type")->check(CLI::IsMember({"f32", "f16", "bf16", "q8_0"}));
      sub.add_option("--max-seq-len", o->max_seq_len, "Context length written (default: the preset's)");
      sub.add_option("--gdn-layout", o->gdn_layout,
                     "qwen3next Gated DeltaNet input projection: fused (legacy ssm_in) | split (attn_qkv + attn_gate, llama.cpp's current converter)")
          ->check(CLI::IsMember({"fused", "split"}));
      sub.add_option("--tokenizer", o->tokenizer,
                     "Hugging Face tokenizer.json to embed (byte-level BPE; ids must fit the preset's vocab); default: a synthetic "
                     "ASCII byte-level vocabulary every GGUF reader (llama.cpp too) accepts; none: no vocabulary (token ids only)");
      return [o]() {
        if (o->preset.empty() && o->arch.empty()) {
          std::cerr << "make-model: give --preset or --arch\n";
          return to_int(ExitCode::input_error);
        }
        const std::string name = o->preset.empty() ? (o->arch == "qwen3next" ? "qwen3-next-tiny" : "tiny-" + o->arch) : o->preset;
        const auto& preset = engine::find_preset(name);
        if (!o->arch.empty() && o->arch != engine::to_string(preset.config.arch)) {
          std::cerr << "make-model: --arch " << o->arch << " does not match preset " << name << " (" << engine::to_string(preset.config.arch) << ")\n";
          return to_int(ExitCode::input_error);
        }
        if (o->format == "safetensors") {
          if (preset.config.arch != engine::Arch::qwen3_next || o->dtype == "q8_0") {
            std::cerr << "make-model: --format safetensors writes qwen3next presets as f32, f16 or bf16\n";
            return to_int(ExitCode::input_error);
          }
          engine::ModelConfig c = preset.config;
          if (o->max_seq_len > 0) c.max_seq_len = o->max_seq_len;
          engine::write_qwen3_next_hf_dir(o->out, c, o->seed,
                                          o->dtype == "f16" ? engine::DType::f16 : o->dtype == "bf16" ? engine::DType::bf16 : engine::DType::f32);
          std::cout << "wrote " << o->out << " (" << name << ", seed " << o->seed << ", " << o->dtype << ", safetensors)\n";
          return to_int(ExitCode::pass);
        }
        engine::GgufWriteOptions w;
        w.dtype = o->dtype == "f16" ? engine::DType::f16 : o->dtype == "bf16" ? engine::DType::bf16 : o->dtype == "q8_0" ? engine::DType::q8_0 : engine::DType::f32;
        w.qwen3next_split_qkv = o->gdn_layout == "split";
        const engine::Model m = engine::make_preset_model(name, o->seed, o->max_seq_len);
        // A file without a vocabulary loads in llama.cpp, which then aborts at the first token it
        // generates (GGML_ASSERT type != LLAMA_VOCAB_TYPE_NONE): by default a synthetic one.
        if (o->tokenizer.empty()) {
          w.tokenizer = engine::synthetic_bpe_vocab(m.config.vocab_size);
        } else if (o->tokenizer != "none") {
          w.tokenizer = engine::read_tokenizer_json(o->tokenizer);
        }
        engine::write_gguf(o->out, m, w);
        std::cout << "wrote " << o->out << " (" << name << ", seed " << o->seed << ", " << o->dtype << ", tokenizer "
                  << (o->tokenizer.empty() ? "synthetic" : o->tokenizer) << ")\n";
        return to_int(ExitCode::pass);
      };
    }}};

}  // namespace
}  // namespace atlas::cli
