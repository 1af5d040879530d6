#pragma once
// The routing fingerprint: one 64-bit hash of every expert id every moe layer chose, so two runs
// (two backends, two build options, host vs device routing) can prove they routed identically
// without comparing ids step by step. Random-weight text is degenerate, routing is not: equal
// output text says little, an equal fingerprint says every top-k choice was the same.
//
// The rule, kept identical in the CUDA router kernels (kernels/moe.cu) and the CPU moe block:
//   per moe layer, h = 0 at reset; for each routed row (token) in order, for each of its k ids in
//   choice order (highest probability first): h = (h XOR (id + 1)) * 0x100000001b3 (mod 2^64);
//   the model's fingerprint H = 0; for each moe layer in layer order: H = (H XOR h) * 0x100000001b3.
// This is FNV-1a's step (Fowler, Noll, Vo; the 64-bit prime 2^40 + 2^8 + 0xb3) over ids, not
// bytes; id + 1 so that expert 0 still changes the hash.
#include <cstdint>
#include <span>

namespace atlas::engine {

inline constexpr std::uint64_t kRoutingFnvPrime = 0x100000001b3ULL;

/// Folds one routed row's (or several rows', in order) expert ids into a layer's running hash.
constexpr std::uint64_t fold_expert_ids(std::uint64_t h, std::span<const int> ids) {
  for (const int id : ids) h = (h ^ static_cast<std::uint64_t>(static_cast<std::int64_t>(id) + 1)) * kRoutingFnvPrime;
  return h;
}

/// The model's fingerprint from its moe layers' hashes, in layer order.
constexpr std::uint64_t combine_layer_routing(std::span<const std::uint64_t> layer_hashes) {
  std::uint64_t h = 0;
  for (const std::uint64_t v : layer_hashes) h = (h ^ v) * kRoutingFnvPrime;
  return h;
}

/// Folds one more fingerprint into a running one (the same step): a prompt set's fingerprint
/// from its prompts' in order.
constexpr std::uint64_t fold_routing_hashes(std::uint64_t running, std::uint64_t next) {
  return (running ^ next) * kRoutingFnvPrime;
}

}  // namespace atlas::engine
