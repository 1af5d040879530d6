#pragma once
// How much memory this process can still allocate and touch: what a buffer that is filled at
// once (a KV cache) must be checked against. Total memory is the wrong bound on a shared box or
// in a container: other processes and the cgroup limit take their share first.
#include <cstdint>
#include <optional>
#include <string_view>

namespace atlas {

/// MemAvailable (bytes) from /proc/meminfo text ("MemAvailable:   22364980 kB"): the kernel's
/// estimate of memory available for new allocations without swapping (free memory plus
/// reclaimable page cache and slab; proc(5)). Nullopt when the line is absent or malformed.
std::optional<std::uint64_t> parse_mem_available(std::string_view meminfo);

/// The bytes this process can still use: MemAvailable, lowered to the cgroup v2 headroom
/// (memory.max - memory.current of /sys/fs/cgroup, when memory.max is not "max"). Nullopt when
/// neither can be read (not Linux, no /proc).
std::optional<std::uint64_t> available_memory_bytes();

}  // namespace atlas
