#pragma once
// What the gate's timed judgement against the merge-base did, for the printers and the record.
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "gates/interleaved.hpp"

namespace atlas::gates {

struct TimedReport {
  bool ran = false;
  std::string skipped_reason;  ///< why no judgement (no merge-base, build failed, --no-timed)
  bool skipped_is_failure = false;  ///< a skip that leaves timed metrics unjudged (inconclusive)
  std::string base_commit;     ///< the merge-base (empty with --base-bin)
  std::string base_binary, head_binary;
  std::string build_line;      ///< "merge-base build: ..." (its own line: not part of the judgement's time)
  double inject_decode_delay_us = 0;  ///< test hook on the head side
  InterleavedOutcome outcome;
};

/// The overall answer of the timed part: its outcome when it ran; inconclusive when it was
/// skipped because it could not run; pass when it was skipped on purpose.
Overall timed_overall(const TimedReport& t);

/// The text section: the build line, a table (metric, tolerance, base and head medians, change,
/// interval, MDE, verdict, why), the rounds and load.
void print_timed_text(const TimedReport& t, std::ostream& out);
void print_timed_markdown(const TimedReport& t, std::ostream& out);
nlohmann::json to_json(const TimedReport& t);

}  // namespace atlas::gates
