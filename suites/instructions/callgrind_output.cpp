#include "suites/instructions/callgrind_output.hpp"

#include <fstream>
#include <sstream>

#include "suites/error.hpp"

namespace atlas::suites {
namespace {

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

}  // namespace

CallgrindDump parse_callgrind_dump(const std::string& text, const std::filesystem::path& file) {
  CallgrindDump d;
  d.file = file;
  std::vector<std::string> events;
  std::vector<std::string> totals;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("desc: Trigger: ", 0) == 0) d.trigger = line.substr(15);
    else if (line.rfind("events:", 0) == 0) events = words(line.substr(7));
    else if (line.rfind("totals:", 0) == 0) totals = words(line.substr(7));
    else if (line.rfind("summary:", 0) == 0 && totals.empty()) totals = words(line.substr(8));
  }
  if (events.empty()) throw SuiteError(file.string() + ": callgrind dump has no 'events:' line");
  if (totals.empty()) throw SuiteError(file.string() + ": callgrind dump has no 'totals:' or 'summary:' line");
  if (totals.size() > events.size()) {
    throw SuiteError(file.string() + ": callgrind dump lists " + std::to_string(totals.size()) + " totals for " +
                     std::to_string(events.size()) + " events");
  }
  for (std::size_t i = 0; i < events.size(); ++i) {
    unsigned long long v = 0;  // trailing zero totals may be omitted (format spec)
    if (i < totals.size()) {
      try {
        std::size_t used = 0;
        v = std::stoull(totals[i], &used);
        if (used != totals[i].size()) throw std::invalid_argument("trailing characters");
      } catch (const std::exception&) {
        throw SuiteError(file.string() + ": callgrind total of event " + events[i] + " = '" + totals[i] +
                         "' is not a count");
      }
    }
    d.totals[events[i]] = v;
  }
  return d;
}

std::vector<CallgrindDump> read_callgrind_dumps(const std::filesystem::path& dir, const std::string& prefix) {
  std::vector<CallgrindDump> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || !e.is_regular_file()) continue;
    std::ifstream f(e.path(), std::ios::binary);
    if (!f) throw SuiteError(e.path().string() + ": cannot read callgrind dump");
    std::ostringstream s;
    s << f.rdbuf();
    out.push_back(parse_callgrind_dump(s.str(), e.path()));
  }
  if (ec) throw SuiteError(dir.string() + ": cannot list callgrind dumps: " + ec.message());
  return out;
}

const CallgrindDump& dump_for_region(const std::vector<CallgrindDump>& dumps, const std::string& region) {
  const std::string want = "Client Request: " + region;
  const CallgrindDump* hit = nullptr;
  std::string seen;
  for (const auto& d : dumps) {
    seen += (seen.empty() ? "" : ", ") + ("'" + d.trigger + "'");
    if (d.trigger != want) continue;
    if (hit) throw SuiteError("two callgrind dumps for region '" + region + "': " + hit->file.string() + ", " + d.file.string());
    hit = &d;
  }
  if (!hit) {
    throw SuiteError("no callgrind dump for region '" + region + "' (dumps found: " + (seen.empty() ? "none" : seen) +
                     "); was the probe built without <valgrind/callgrind.h>?");
  }
  return *hit;
}

unsigned long long event_total(const CallgrindDump& d, const std::string& event) {
  const auto it = d.totals.find(event);
  return it == d.totals.end() ? 0 : it->second;
}

}  // namespace atlas::suites
