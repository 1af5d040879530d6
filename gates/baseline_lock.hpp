#pragma once
// One writer at a time per BASELINE folder. `baseline ratchet` and `accept` read the file,
// change it and write it back; two at once both read the old file and the second rename wins,
// losing the first's update while both exit 0 (19 of 20 trials). The lock is an flock on the
// machine-class folder itself, so no lock file appears among the committed files; it is taken
// before the file is read and released when the object goes, also when the process dies.
#include <filesystem>

namespace atlas::gates {

class BaselineLock {
 public:
  /// Creates the folder of `baseline_file` when missing and waits for its lock (saying so on
  /// stderr when another process holds it). Throws GateError when the folder cannot be opened.
  explicit BaselineLock(const std::filesystem::path& baseline_file);
  ~BaselineLock();
  BaselineLock(const BaselineLock&) = delete;
  BaselineLock& operator=(const BaselineLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace atlas::gates
