#pragma once
// Progress of a suite run, one step per request. On a terminal a single line is redrawn as a
// bar; in CI (CI=true) or when the stream is not a TTY each step is a plain line, so logs stay
// readable. Progress goes to stderr by default so stdout holds only results.
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>

namespace atlas::suites {

class Progress {
 public:
  virtual ~Progress() = default;
  /// A new phase (e.g. "ttft") with `total_steps` steps (0 when unknown).
  virtual void begin(std::string_view phase, int total_steps) = 0;
  /// One step done; `label` says which (e.g. "cold len=128 rep 2/3").
  virtual void step(std::string_view label) = 0;
  /// The phase is over; `summary` is printed once.
  virtual void end(std::string_view summary) = 0;
};

/// Prints nothing.
class NullProgress final : public Progress {
 public:
  void begin(std::string_view, int) override {}
  void step(std::string_view) override {}
  void end(std::string_view) override {}
};

/// What the printing kinds share: the stream, the phase, and its steps counted so far.
class CountingProgress : public Progress {
 protected:
  explicit CountingProgress(std::ostream& os) : os_(&os) {}
  /// A new phase: its name and step count, none done.
  void start(std::string_view phase, int total_steps);

  std::ostream* os_;
  std::string phase_;
  int total_ = 0, done_ = 0;
};

/// One plain line per step: "[ttft 3/40] cold len=128 rep 1/3".
class LineProgress final : public CountingProgress {
 public:
  explicit LineProgress(std::ostream& os) : CountingProgress(os) {}
  void begin(std::string_view phase, int total_steps) override;
  void step(std::string_view label) override;
  void end(std::string_view summary) override;
};

/// A redrawn bar: "ttft [#########.........] 18/40 cold len=128".
class BarProgress final : public CountingProgress {
 public:
  explicit BarProgress(std::ostream& os) : CountingProgress(os) {}
  void begin(std::string_view phase, int total_steps) override;
  void step(std::string_view label) override;
  void end(std::string_view summary) override;
};

/// BarProgress when `fd` is a terminal and CI is not set to a true value, else LineProgress.
std::unique_ptr<Progress> make_progress(std::ostream& os, int fd);

}  // namespace atlas::suites
