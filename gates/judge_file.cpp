#include "gates/judge_file.hpp"

#include <set>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/json_depth.hpp"
#include "common/atomic_file.hpp"
#include "gates/error.hpp"

namespace atlas::gates {
namespace {

std::string read_text(const std::filesystem::path& path) {
  try {
    return read_file(path);
  } catch (const InputError& e) {
    throw GateError(e.what());
  }
}

// The JSON paths where two texts differ ("/timed/metrics", ...), at most `limit` named; the
// raw texts are compared when either does not parse.
std::string changed_fields(const std::string& before, const std::string& after) {
  if (json_nesting_depth(before, kMaxJsonNesting) > kMaxJsonNesting ||
      json_nesting_depth(after, kMaxJsonNesting) > kMaxJsonNesting)
    return "nested too deep to compare";
  const auto a = nlohmann::json::parse(before, nullptr, false);
  const auto b = nlohmann::json::parse(after, nullptr, false);
  if (a.is_discarded() || b.is_discarded()) return "not JSON";
  std::set<std::string> paths;
  for (const auto& op : nlohmann::json::diff(a, b)) {
    std::string p = op.value("path", "");
    // A key added or removed is a change of the object holding it ("/timed/metrics" when its
    // metric keys were swapped); a top-level key is named itself.
    if (op.value("op", "") != "replace" && p.rfind('/') != 0 && p.rfind('/') != std::string::npos) p.erase(p.rfind('/'));
    // Array elements collapse to their array: "/suites/3" -> "/suites".
    while (!p.empty()) {
      const auto slash = p.rfind('/');
      const std::string last = p.substr(slash + 1);
      if (last.empty() || last.find_first_not_of("0123456789-") != std::string::npos) break;
      p.erase(slash);
    }
    paths.insert(p.empty() ? "/" : p);
  }
  std::string out;
  std::size_t n = 0;
  for (const auto& p : paths) {
    if (++n > 8) {
      out += ", ... (" + std::to_string(paths.size()) + " in all)";
      break;
    }
    out += (out.empty() ? "" : ", ") + p;
  }
  return out;
}

}  // namespace

JudgeFile judge_file(const MergeBase& mb, const std::filesystem::path& path, const std::string& what) {
  JudgeFile f;
  if (!mb.found()) {
    f.text = read_text(path);
    f.source = path.string();
    return f;
  }
  const auto rel = path_in_checkout(mb, path);
  const auto committed = rel ? text_at_merge_base(mb, *rel) : std::nullopt;
  if (!committed) {
    f.text = read_text(path);
    f.source = path.string();
    f.note = what + " " + path.string() +
             (rel ? " is not committed at the merge-base " : " lies outside the checkout, so not at the merge-base ") +
             mb.commit.substr(0, 12) + ": judged with it as given, so the result cannot pass";
    return f;
  }
  f.text = *committed;
  f.source = *rel + "@" + mb.commit.substr(0, 12);
  f.reviewed = true;
  std::error_code ec;
  const std::string here = std::filesystem::exists(path, ec) ? read_text(path) : std::string();
  if (here != *committed)
    f.note = what + " " + *rel + " changed since the merge-base (" + changed_fields(*committed, here) +
             "): judged with the merge-base's copy; the change takes effect once merged";
  return f;
}

}  // namespace atlas::gates
