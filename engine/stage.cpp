#include "engine/stage.hpp"

#include "common/clock.hpp"

namespace atlas::engine {

std::string_view to_string(Stage s) {
  switch (s) {
    case Stage::embed: return "embed";
    case Stage::attn_norm: return "attn_norm";
    case Stage::qkv: return "qkv";
    case Stage::rope: return "rope";
    case Stage::attention: return "attention";
    case Stage::o_proj: return "o_proj";
    case Stage::ffn_norm: return "ffn_norm";
    case Stage::ffn_gate_up: return "ffn_gate_up";
    case Stage::ffn_down: return "ffn_down";
    case Stage::final_norm: return "final_norm";
    case Stage::lm_head: return "lm_head";
    case Stage::sample: return "sample";
    case Stage::attn_gate: return "attn_gate";
    case Stage::gdn_in_proj: return "gdn_in_proj";
    case Stage::gdn_conv: return "gdn_conv";
    case Stage::gdn_recurrence: return "gdn_recurrence";
    case Stage::gdn_norm: return "gdn_norm";
    case Stage::gdn_out_proj: return "gdn_out_proj";
    case Stage::moe_router: return "moe_router";
    case Stage::moe_experts: return "moe_experts";
    case Stage::moe_shared: return "moe_shared";
    case Stage::count_: break;
  }
  return "unknown";
}

StageTimer::Scope::Scope(StageTimer* t, Stage s) : timer_(t), stage_(s), t0_(t ? atlas::now_ns() : 0) {}

StageTimer::Scope::~Scope() {
  if (!timer_) return;
  const auto i = static_cast<std::size_t>(stage_);
  timer_->totals_.ns[i] += atlas::now_ns() - t0_;
  timer_->totals_.calls[i] += 1;
}

}  // namespace atlas::engine
