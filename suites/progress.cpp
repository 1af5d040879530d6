#include "suites/progress.hpp"

#include <unistd.h>

#include <cstdlib>
#include <ostream>
#include <string>

#include "common/env_flag.hpp"

namespace atlas::suites {

void CountingProgress::start(std::string_view phase, int total_steps) {
  phase_ = phase;
  total_ = total_steps;
  done_ = 0;
}

void LineProgress::begin(std::string_view phase, int total_steps) {
  start(phase, total_steps);
  *os_ << "[" << phase_ << "] start (" << total_ << " steps)\n" << std::flush;
}

void LineProgress::step(std::string_view label) {
  ++done_;
  *os_ << "[" << phase_ << " " << done_ << "/" << total_ << "] " << label << "\n" << std::flush;
}

void LineProgress::end(std::string_view summary) {
  *os_ << "[" << phase_ << "] done" << (summary.empty() ? "" : ": ") << summary << "\n" << std::flush;
}

void BarProgress::begin(std::string_view phase, int total_steps) { start(phase, total_steps); }

void BarProgress::step(std::string_view label) {
  ++done_;
  constexpr int kWidth = 24;
  const int filled = total_ > 0 ? std::min(kWidth, done_ * kWidth / total_) : 0;
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.append(static_cast<std::size_t>(kWidth - filled), '.');
  std::string line = phase_ + " [" + bar + "] " + std::to_string(done_) + "/" + std::to_string(total_) + " " +
                     std::string(label);
  if (line.size() > 100) line.resize(100);
  // \x1b[2K clears the line so a shorter label leaves no residue.
  *os_ << "\r\x1b[2K" << line << std::flush;
}

void BarProgress::end(std::string_view summary) {
  *os_ << "\r\x1b[2K" << phase_ << " done" << (summary.empty() ? "" : ": ") << summary << "\n" << std::flush;
}

std::unique_ptr<Progress> make_progress(std::ostream& os, int fd) {
  // CI as the build reads it (common/env_flag.hpp ci_env: lenient, never an error).
  if (!ci_env() && ::isatty(fd)) return std::make_unique<BarProgress>(os);
  return std::make_unique<LineProgress>(os);
}

}  // namespace atlas::suites
