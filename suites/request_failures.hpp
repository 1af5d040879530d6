#pragma once
// Failed requests of a suite that keeps what it measured (ttft, agentic): a server that dies or
// answers an error mid-run must not take the requests that completed with it. Each failure is
// counted and the first few are listed with what they were; after kStopAfterConsecutive failed
// requests in a row (a server that is gone fails every request, each after up to a timeout) the
// suite stops sending. The suite then reports details["invalid_reason"]: the record keeps every
// figure measured and is invalid (`run` exits 2, inconclusive).
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "suites/target.hpp"

namespace atlas::suites {

class RequestFailures {
 public:
  /// Failed requests in a row after which should_stop() is true.
  static constexpr int kStopAfterConsecutive = 3;
  /// Failures listed in details["failures"] (the rest are counted only).
  static constexpr int kListed = 10;

  /// Records the outcome of one request (`what` names it: "ttft cold len=64"). Returns true when
  /// it failed (!resp.ok).
  bool failed(const TargetResponse& resp, std::string_view what);
  /// The same, for an outcome known apart from its response: a request that completed, or one
  /// that failed with `error`.
  void completed();
  void failed(std::string_view what, const std::string& error);
  /// The requests the suite would send were none to fail: those not sent (a warm request after
  /// its failed cold one, a session's turns after a failed turn, all after the stop) are
  /// planned - requests().
  explicit RequestFailures(int planned) : planned_(planned) {}
  bool should_stop() const { return consecutive_ >= kStopAfterConsecutive; }
  int failures() const { return failed_; }
  int requests() const { return requests_; }

  /// details["failed_requests"] (always), and when any request failed details["failures"]
  /// ([{request, error}], the first kListed), details["requests_not_sent"] and
  /// details["invalid_reason"]: "F of N requests failed (first: <request>: <error>)", plus
  /// "; stopped after 3 consecutive failed requests" when the suite stopped. `target` names
  /// the target in the reason.
  void add_details(nlohmann::json& details, const std::string& target) const;

 private:
  int requests_ = 0;
  int failed_ = 0;
  int consecutive_ = 0;
  int planned_ = 0;
  nlohmann::json listed_ = nlohmann::json::array();
};

}  // namespace atlas::suites
