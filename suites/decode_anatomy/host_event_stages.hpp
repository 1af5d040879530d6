#pragma once
// Which stage a decode step's traced copies and host syncs belong to. A tracer (CUPTI) sees
// copies and *Synchronize calls but not who made them; the engine's launch tape knows which
// stage asked for each copy and sync a block made mid-step (MoE routing on the host: a D2H copy
// of the router logits, a sync, an H2D copy of the choice), in order. The step itself adds one
// H2D upload of its inputs before every block (charged to "embed", whose kernel reads it) and,
// after every block, its D2H download(s) of the result and the final sync ("sample").
#include <map>
#include <string>
#include <vector>

namespace atlas::suites {

/// A copy or sync the engine's tape recorded for one stage, in enqueue order.
struct TapeHostEvent {
  enum class Kind { h2d, d2h, sync };
  std::string stage;
  Kind kind = Kind::sync;
};

struct HostEventCounts {
  double copies_h2d = 0, copies_d2h = 0, host_syncs = 0;
};

/// Charges one traced step: `h2d_copies`, `d2h_copies` and `syncs` as the tracer counted them,
/// against the tape's `events`. When the traced counts hold the tape's events plus the step's own
/// (>= 1 H2D, >= 1 D2H, >= 1 sync beyond them), the tape's go to their stages and the rest to
/// embed (H2D) and sample (D2H, syncs); otherwise (a tape that does not match what was traced,
/// e.g. a replayed graph whose tape is from its capture) every copy and sync goes to the step's
/// own stages, as if no block had made any. Returns the counts by stage name.
std::map<std::string, HostEventCounts> charge_host_events(int h2d_copies, int d2h_copies, int syncs,
                                                          const std::vector<TapeHostEvent>& events);

}  // namespace atlas::suites
