// The factory of device blocks: the one place that maps a block kind to its class.
#include "engine/cuda/blocks/device_block.hpp"

#include <string>

#include "engine/error.hpp"

namespace atlas::engine::cuda {

std::unique_ptr<DeviceBlock> make_attention_block(const ModelConfig& c, int layer, kernels::ElemType wt, bool gated, bool veto,
                                                  int max_seq);
std::unique_ptr<DeviceBlock> make_deltanet_block(const ModelConfig& c, int layer, kernels::ElemType wt, bool veto);
std::unique_ptr<DeviceBlock> make_swiglu_block(const ModelConfig& c, int layer, kernels::ElemType wt);
std::unique_ptr<DeviceBlock> make_moe_block(const ModelConfig& c, int layer, kernels::ElemType wt, bool host_routing);

std::unique_ptr<DeviceBlock> make_device_mixer(const ModelConfig& c, int layer, kernels::ElemType wt, bool veto, int max_seq) {
  switch (c.block(layer).mixer) {
    case MixerKind::attention: return make_attention_block(c, layer, wt, false, veto, max_seq);
    case MixerKind::gated_attention: return make_attention_block(c, layer, wt, true, veto, max_seq);
    case MixerKind::gated_deltanet: return make_deltanet_block(c, layer, wt, veto);
  }
  throw EngineError("cuda backend: layer " + std::to_string(layer) + " has an unknown mixer kind");
}

std::unique_ptr<DeviceBlock> make_device_ffn(const ModelConfig& c, int layer, kernels::ElemType wt, bool moe_host_routing) {
  switch (c.block(layer).ffn) {
    case FfnKind::swiglu: return make_swiglu_block(c, layer, wt);
    case FfnKind::moe: return make_moe_block(c, layer, wt, moe_host_routing);
  }
  throw EngineError("cuda backend: layer " + std::to_string(layer) + " has an unknown ffn kind");
}

}  // namespace atlas::engine::cuda
