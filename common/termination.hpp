#pragma once
// SIGINT / SIGTERM / SIGHUP for a command-line program that starts child processes (a compile,
// valgrind, the timed gate's sides) and temporary files and folders: on the first such signal
// every registered child process group gets the same signal (SIGKILL after a grace period), every
// registered temporary path is removed, and the process exits with 128 + the signal number (130
// for SIGINT, 143 for SIGTERM, the shell's convention). A second signal kills at once (the
// handler is one-shot).
//
// Why exit from a watcher thread instead of unwinding: the main thread may be deep in an
// in-process suite (the engine decoding) that polls no flag; the cleanup must not wait for it.
// A record or baseline write it interrupts leaves the old file (writes are temp + rename, and the
// temp file is registered here or unnamed, see atomic_file.hpp).
#include <filesystem>
#include <sys/types.h>

namespace atlas::termination {

/// Installs the handlers and starts the watcher thread; once per process (later calls do
/// nothing). Until it is called, the registrations below are kept but nothing acts on them.
void install();

/// 0, or the signal that asked this process to stop.
int requested();

/// When a stop was asked for, blocks the calling thread for good (the watcher thread exits the
/// process once the children are stopped and the temporary paths removed); returns at once
/// otherwise. Called where a thread would go on after a child it waited for was stopped by the
/// signal (run_process_with), and at exit(), so the program cannot finish with its own exit
/// code (or start the next step) before the cleanup.
void park_if_requested();

/// A child process group (the child's pid, the child made its own group leader) that gets the
/// signal on termination. RAII: registered for its lifetime. At most 64 live at once; more are
/// not registered (the 65th compile would then outlive a SIGTERM, nothing worse).
class ChildGroup {
 public:
  explicit ChildGroup(pid_t pgid);
  ~ChildGroup();
  ChildGroup(const ChildGroup&) = delete;
  ChildGroup& operator=(const ChildGroup&) = delete;
  /// Unregisters now (the child was reaped).
  void release();

 private:
  int slot_ = -1;
};

/// A temporary file or folder removed (recursively) on termination. RAII: registered for its
/// lifetime; it does not remove the path itself when it goes out of scope.
class TempPath {
 public:
  explicit TempPath(std::filesystem::path path);
  ~TempPath();
  TempPath(const TempPath&) = delete;
  TempPath& operator=(const TempPath&) = delete;

 private:
  std::filesystem::path path_;
};

}  // namespace atlas::termination
