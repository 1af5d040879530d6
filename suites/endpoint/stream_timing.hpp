#pragma once
// Per-token arrival times from the chunks of a streamed response. A chunk may carry several
// tokens (a server that batches, or bytes held back to complete a UTF-8 character); then its
// gap since the previous chunk is split evenly over its tokens, so the ITL samples still number
// tokens - 1 and sum to the time from the first to the last token. Tokens of the first chunk
// all arrive at its time (TTFT is the first chunk; the extra tokens add zero gaps).
#include <cstdint>
#include <span>
#include <vector>

namespace atlas::suites::endpoint {

struct ChunkArrival {
  std::int64_t t_ns = 0;  ///< atlas::now_ns() when the chunk's last byte was read
  int tokens = 1;         ///< tokens it carries (>= 1)
  std::uint64_t wake = 0; ///< the client's wake-up that read it (0: unknown)
};

/// Chunks read in one go are one arrival carrying their summed tokens, at the latest of their
/// times: consecutive chunks with the same time (one socket read; the kernel merges segments
/// that queue while the client is busy; docs/serving.md) or the same nonzero wake-up (one
/// poll return: bytes that landed between the client's peek and its read carry the read time,
/// microseconds after the peeked ones, which as separate arrivals would give near-zero ITLs).
/// The arrival's gap since the previous one is then spread over its tokens instead of giving
/// zero-length ITLs and unbounded tok/s. Order is kept.
std::vector<ChunkArrival> merge_same_read(std::span<const ChunkArrival> chunks);

/// One time per token: sum of chunk tokens entries, non-decreasing.
std::vector<std::int64_t> token_arrival_times(std::span<const ChunkArrival> chunks);

/// Splits `total` tokens over chunks in proportion to `weights` (each >= 1), every chunk getting
/// at least one token, by largest remainder (ties to the earlier chunk). When total < number of
/// chunks every chunk gets one token (the server's count cannot be placed: the caller reports it).
std::vector<int> distribute_tokens(std::span<const int> weights, int total);

}  // namespace atlas::suites::endpoint
