#pragma once
// A fresh temporary folder (mkdtemp under $TMPDIR, else /tmp), removed with everything in it
// when the object goes out of scope, and by common/termination.hpp when a SIGINT / SIGTERM
// stops the process first.
#include <filesystem>
#include <optional>
#include <string>

#include "common/termination.hpp"

namespace atlas {

class TempDir {
 public:
  /// `prefix` e.g. "atlas-callgrind-": the folder is <tmp>/<prefix>XXXXXX. Throws atlas::Error
  /// naming the template when it cannot be created.
  explicit TempDir(const std::string& prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  std::optional<termination::TempPath> guard_;
};

}  // namespace atlas
