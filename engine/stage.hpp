#pragma once
// The stage taxonomy of one decode step and a scoped, low-overhead per-stage timer.
// Off by default: a disabled StageTimer::Scope costs one branch.
#include <array>
#include <cstdint>
#include <string_view>

namespace atlas::engine {

enum class Stage : int {
  embed, attn_norm, qkv, rope, attention, o_proj, ffn_norm, ffn_gate_up, ffn_down, final_norm, lm_head, sample,
  // gated_attention: output gate sigmoid(gate) * attention output (its q/k/v, rope, attention and
  // o_proj reuse the stages above).
  attn_gate,
  // gated_deltanet: input projections (qkvz, ba), causal conv1d + SiLU, the delta-rule
  // recurrence (decode) or its chunked form (prefill), the gated RMSNorm, out_proj.
  gdn_in_proj, gdn_conv, gdn_recurrence, gdn_norm, gdn_out_proj,
  // moe: router softmax + top-k, the routed experts' SwiGLU, the gated shared expert.
  moe_router, moe_experts, moe_shared,
  count_
};
inline constexpr int kStageCount = static_cast<int>(Stage::count_);
std::string_view to_string(Stage s);

/// Accumulates wall nanoseconds and entry counts per stage (host clock; a GPU backend reports
/// its own GPU times through the decode-anatomy suite's CUPTI path instead).
class StageTimer {
 public:
  struct Totals {
    std::array<std::int64_t, kStageCount> ns{};
    std::array<std::int64_t, kStageCount> calls{};
  };
  class Scope {
   public:
    Scope(StageTimer* t, Stage s);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
   private:
    StageTimer* timer_;
    Stage stage_;
    std::int64_t t0_;
  };

  void set_enabled(bool on) { enabled_ = on; }
  bool enabled() const { return enabled_; }
  void reset() { totals_ = {}; }
  const Totals& totals() const { return totals_; }
  Scope scope(Stage s) { return Scope(enabled_ ? this : nullptr, s); }

 private:
  bool enabled_ = false;
  Totals totals_;
};

}  // namespace atlas::engine
