#pragma once
// Reading callgrind's dump files (format: valgrind's "Callgrind Format Specification",
// docs/callgrind-format): the "desc: Trigger: ..." line names the client request that wrote the
// dump, "events:" names the counters, "totals:" (or "summary:") holds their sums.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace atlas::suites {

struct CallgrindDump {
  std::filesystem::path file;
  std::string trigger;                        ///< e.g. "Client Request: decode", "Program termination"
  std::map<std::string, unsigned long long> totals;  ///< event name ("Ir", "D1mr", ...) -> sum
};

/// Parses one dump's text (`file` is only for messages). Throws SuiteError naming the file
/// when the events or totals line is missing or malformed.
CallgrindDump parse_callgrind_dump(const std::string& text, const std::filesystem::path& file);

/// Every "<prefix>*" dump file in `dir`, parsed. Throws SuiteError for an unreadable file.
std::vector<CallgrindDump> read_callgrind_dumps(const std::filesystem::path& dir, const std::string& prefix);

/// The dump whose trigger is "Client Request: <region>"; throws SuiteError listing the
/// triggers found when there is none or more than one.
const CallgrindDump& dump_for_region(const std::vector<CallgrindDump>& dumps, const std::string& region);

/// An event's total, 0 when the dump has no such event (a tool option not enabled). 
unsigned long long event_total(const CallgrindDump& d, const std::string& event);

}  // namespace atlas::suites
