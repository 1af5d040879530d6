#pragma once
// The measured side of the instructions suite: runs inside `valgrind --tool=callgrind
// --collect-atstart=no` (started by run_instructions_suite through the hidden
// `atlas-bench instruction-probe` command) and brackets exactly two regions with callgrind
// client requests, each dumped to its own file:
//
//   "prefill": one prompt of `prompt_tokens` ids (BOS + seeded ordinary ids) prefilled from an
//              empty cache, and its first token sampled;
//   "decode":  `decode_tokens` one-token forwards after it (the first generated token fed back,
//              then decode_tokens - 1 more), each sampled greedily: decode-anatomy's window.
//
// Model loading runs uninstrumented (--instr-atstart=no: fast); an identical warm-up generation
// then runs instrumented but outside both regions, so the regions see warm allocator state and a
// warm simulated cache. One CPU thread (a thread pool would add
// scheduling-dependent spinning to the count).
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/engine.hpp"

namespace atlas::suites {

struct ProbeRequest {
  engine::EngineOptions engine;  ///< backend must be "cpu"; threads is forced to 1
  int prompt_tokens = 32;        ///< >= 1, BOS included
  int decode_tokens = 16;        ///< >= 1
  std::uint64_t seed = 1;        ///< prompt ids
};

struct ProbeReport {
  int prefilled_tokens = 0;
  int decoded_tokens = 0;
  std::vector<int> output_ids;   ///< the decode region's tokens (proof both sides ran the same work)
  bool under_valgrind = false;
  nlohmann::json to_json() const;
  static ProbeReport from_json(const nlohmann::json& j);  ///< throws SuiteError on a bad report
};

/// Runs the two regions (counting only under callgrind). Throws engine::EngineError for a bad
/// model, SuiteError for a non-CPU backend or a generation that stopped early.
ProbeReport run_instruction_probe(const ProbeRequest& req);

}  // namespace atlas::suites
