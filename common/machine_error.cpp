#include "common/machine_error.hpp"

#include <cerrno>

namespace atlas {

bool errno_is_machine_failure(int err) noexcept {
  switch (err) {
    // The path the user named is wrong: missing, not a folder (or one), not theirs to write,
    // on a read-only file system, already taken, too long, a link loop; a name its file system
    // cannot hold (EINVAL: a ':' on FAT or SMB), a folder that is not empty where a file goes, a
    // running program's file, a device or special file named where a file was meant.
    case EINVAL:
    case ENOTEMPTY:
    case ETXTBSY:
    case ENXIO:
    case ENODEV:
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
