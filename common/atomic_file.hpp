#pragma once
// Atomic file writes: the content goes to a temporary file in the same directory, is flushed
// with fsync, then renamed over the target, so a reader (or a killed writer) never sees a
// partial file. Records and baselines are written only through these functions. The temporary
// file has no name while it is written (O_TMPFILE, Linux 3.11+), so a writer killed even by
// SIGKILL leaves nothing behind; it is named only for the rename (a SIGTERM then removes it,
// common/termination.hpp). File systems without O_TMPFILE get a named temporary file.
#include <filesystem>
#include <string_view>

namespace atlas {

/// Writes `content` to `path` atomically (temp + fsync + rename). Creates parent directories.
/// Throws naming the path and the system's reason on any I/O failure: an InputError when the
/// path is wrong (a parent that is a file, no permission, a read-only file system), a
/// MachineError when the machine failed (no space, an I/O error, out of descriptors:
/// errno_is_machine_failure in common/machine_error.hpp), so a command exits 3 or 4.
void write_file_atomic(const std::filesystem::path& path, std::string_view content);

/// As write_file_atomic, but fails (throws atlas::InputError) if `path` already exists: records are
/// never overwritten. Uses link(2) so that two writers cannot both succeed.
void write_file_atomic_new(const std::filesystem::path& path, std::string_view content);

/// Reads a whole file; throws atlas::InputError naming the path when it cannot be read.
std::string read_file(const std::filesystem::path& path);

}  // namespace atlas
