#include "suites/request_failures.hpp"

#include <algorithm>

namespace atlas::suites {

bool RequestFailures::failed(const TargetResponse& resp, std::string_view what) {
  if (resp.ok) {
    completed();
    return false;
  }
  failed(what, resp.error);
  return true;
}

void RequestFailures::completed() {
  ++requests_;
  consecutive_ = 0;
}

void RequestFailures::failed(std::string_view what, const std::string& error) {
  ++requests_;
  ++failed_;
  ++consecutive_;
  if (static_cast<int>(listed_.size()) < kListed) listed_.push_back({{"request", std::string(what)}, {"error", error}});
}

void RequestFailures::add_details(nlohmann::json& details, const std::string& target) const {
  details["failed_requests"] = failed_;
  if (failed_ == 0) return;
  details["failures"] = listed_;
  const int not_sent = std::max(0, planned_ - requests_);
  details["requests_not_sent"] = not_sent;
  std::string why = std::to_string(failed_) + " of " + std::to_string(requests_) + " requests failed (first: " +
                    listed_[0]["request"].get<std::string>() + ": " + listed_[0]["error"].get<std::string>().substr(0, 300) +
                    "; " + target + ")";
  if (should_stop()) {
    why += "; stopped after " + std::to_string(kStopAfterConsecutive) + " consecutive failed requests";
  }
  if (not_sent > 0) why += "; " + std::to_string(not_sent) + " of " + std::to_string(planned_) + " requests not sent";
  why += "; the figures kept are those of the requests that completed";
  details["invalid_reason"] = why;
}

}  // namespace atlas::suites
