#pragma once
// The records layer's error type: malformed records, unreadable stores, bad statistics input.
// Messages name the file, the JSON path of the field and the bad value, e.g.
//   ".benchmarks/cpu-2c-x86_64/abc/pr-20261129T143320Z.json: /suites/ttft/metrics/ttft_ms/unit:
//    expected a string, got 42"
#include <string>

#include "common/error.hpp"

namespace atlas::records {

class RecordError : public atlas::InputError {
 public:
  using atlas::InputError::InputError;
};

}  // namespace atlas::records
