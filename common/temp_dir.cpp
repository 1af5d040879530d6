#include "common/temp_dir.hpp"

#include <stdlib.h>

#include <cerrno>
#include <cstring>

#include "common/error.hpp"
#include "common/machine_error.hpp"

namespace atlas {

TempDir::TempDir(const std::string& prefix) {
  std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
  if (::mkdtemp(tmpl.data()) == nullptr) throw MachineError("cannot create a temporary folder " + tmpl + ": " + std::strerror(errno));
  path_ = tmpl;
  guard_.emplace(path_);
}

TempDir::~TempDir() {
  guard_.reset();
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace atlas
