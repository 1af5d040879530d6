#include "suites/decode_anatomy/host_event_stages.hpp"

namespace atlas::suites {

std::map<std::string, HostEventCounts> charge_host_events(int h2d_copies, int d2h_copies, int syncs,
                                                          const std::vector<TapeHostEvent>& events) {
  int tape_h2d = 0, tape_d2h = 0, tape_sync = 0;
  for (const auto& e : events) {
    tape_h2d += e.kind == TapeHostEvent::Kind::h2d;
    tape_d2h += e.kind == TapeHostEvent::Kind::d2h;
    tape_sync += e.kind == TapeHostEvent::Kind::sync;
  }
  std::map<std::string, HostEventCounts> out;
  const bool matches = !events.empty() && h2d_copies >= tape_h2d + 1 && d2h_copies >= tape_d2h + 1 && syncs >= tape_sync + 1;
  if (matches) {
    for (const auto& e : events) {
      HostEventCounts& c = out[e.stage];
      if (e.kind == TapeHostEvent::Kind::h2d) c.copies_h2d += 1;
      if (e.kind == TapeHostEvent::Kind::d2h) c.copies_d2h += 1;
      if (e.kind == TapeHostEvent::Kind::sync) c.host_syncs += 1;
    }
  } else {
    tape_h2d = tape_d2h = tape_sync = 0;
  }
  if (h2d_copies - tape_h2d > 0) out["embed"].copies_h2d += h2d_copies - tape_h2d;
  if (d2h_copies - tape_d2h > 0) out["sample"].copies_d2h += d2h_copies - tape_d2h;
  if (syncs - tape_sync > 0) out["sample"].host_syncs += syncs - tape_sync;
  return out;
}

}  // namespace atlas::suites
