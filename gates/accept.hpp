#pragma once
// `baseline accept` as a library: which metrics a request names (--metric keys, --suite names),
// and moving them all or none (gates/ratchet.hpp's accept and remove_metric, one metric each).
// tools/atlas-bench/cmd_baseline.cpp only loads, locks, saves and prints.
#include <string>
#include <vector>

#include "gates/baseline.hpp"
#include "gates/config.hpp"
#include "gates/ratchet.hpp"
#include "records/record.hpp"

namespace atlas::gates {

/// What `baseline accept` was asked for.
struct AcceptRequest {
  std::vector<std::string> metrics;  ///< "<suite>/<metric>" keys (--metric)
  std::vector<std::string> suites;   ///< every metric with samples of these suites in the record (--suite)
  std::string reason;                ///< kept in each history entry
  bool remove = false;               ///< drop the --metric keys from the baseline instead
};

/// Throws GateError when the request names no metric and no suite, has no reason, or asks to
/// remove by suite.
void check_accept_request(const AcceptRequest& request);

/// The keys to accept: the --metric keys, then each --suite's metrics that have samples in
/// `record`, in the record's order. Throws GateError naming the suite and the record's run id
/// when the record has no metrics of a suite.
std::vector<std::string> accept_keys(const AcceptRequest& request, const records::Record& record);

/// Accepts each of accept_keys(request, record) (gates::accept) and returns them. All or
/// nothing: when one fails, `b` is left as it was and the GateError says which.
std::vector<std::string> accept_all(Baseline& b, const AcceptRequest& request, const records::Record& record,
                                    const GateConfig& cfg, const ChangeStamp& stamp);

/// Removes each of request.metrics (gates::remove_metric). All or nothing, as accept_all.
void remove_all(Baseline& b, const AcceptRequest& request, const ChangeStamp& stamp);

}  // namespace atlas::gates
