// The one place a layer's block kinds become objects: ModelConfig::block(l) names a mixer and
// an ffn kind, and each kind's maker lives in that kind's own file (engine/cpu/blocks.hpp).
#include "engine/cpu/blocks.hpp"

namespace atlas::engine::cpu {

std::unique_ptr<Mixer> make_mixer(const Model& model, int layer, int max_seq_len, int) {
  switch (model.config.block(layer).mixer) {
    case MixerKind::attention: return make_attention_mixer(model, layer, max_seq_len, false);
    case MixerKind::gated_attention: return make_attention_mixer(model, layer, max_seq_len, true);
    case MixerKind::gated_deltanet: return make_deltanet_mixer(model, layer);
  }
  return nullptr;
}

std::unique_ptr<Ffn> make_ffn(const Model& model, int layer) {
  switch (model.config.block(layer).ffn) {
    case FfnKind::swiglu: return make_swiglu_ffn(model, layer);
    case FfnKind::moe: return make_moe_ffn(model, layer);
  }
  return nullptr;
}

}  // namespace atlas::engine::cpu
