#include "common/machine_error.hpp"

#include <cerrno>

namespace atlas {

bool errno_is_machine_failure(int err) noexcept {
  switch (err) {
    // The path the user named is wrong: missing, not a folder (or one), not theirs to write,
    // on a read-only file system, already taken, too long, a link loop.
    case ENOENT:
    case ENOTDIR:
    case EISDIR:
    case EACCES:
    case EPERM:
    case EROFS:
    case EEXIST:
    case ENAMETOOLONG:
    case ELOOP:
      return false;
    default:
      return true;
  }
}

}  // namespace atlas
