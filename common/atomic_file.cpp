#include "common/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "common/error.hpp"
#include "common/machine_error.hpp"
#include "common/termination.hpp"

namespace atlas {
namespace {

std::filesystem::path dir_of(const std::filesystem::path& path) { return path.has_parent_path() ? path.parent_path() : std::filesystem::path("."); }

/// A name beside `path` for its temporary file: ".<name>.tmp.<pid>.<random>".
std::filesystem::path temp_name(const std::filesystem::path& path) {
  std::random_device rd;
  // Appended piece by piece: GCC 12's -Wrestrict misfires on a chained operator+ here.
  std::string name = ".";
  name += path.filename().string();
  name += ".tmp.";
  name += std::to_string(::getpid());
  name += ".";
  name += std::to_string(rd());
  return dir_of(path) / name;
}

void write_all(int fd, std::string_view content, const std::string& what) {
  std::size_t off = 0;
  while (off < content.size()) {
    const ssize_t n = ::write(fd, content.data() + off, content.size() - off);
    if (n < 0) {
      const int err = errno;
      if (err == EINTR) continue;
      throw_errno_error("cannot write " + what, err);
    }
    off += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const int err = errno;
    throw_errno_error("cannot flush " + what, err);
  }
}

/// The content, written and flushed, in a file beside `path` that has no name yet
/// (O_TMPFILE): a writer killed at any moment, SIGKILL included, leaves nothing behind (a
/// killed `records merge` once left a 300 MB temp file). link_to() names it.
class UnnamedTemp {
 public:
  /// fd() < 0 when the file system cannot make unnamed files (the caller falls back).
  UnnamedTemp(const std::filesystem::path& path, std::string_view content) : what_("a temporary file for " + path.string()) {
    fd_ = ::open(dir_of(path).c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
    if (fd_ < 0) return;
    try {
      write_all(fd_, content, what_);
    } catch (...) {
      ::close(fd_);
      throw;
    }
  }
  ~UnnamedTemp() {
    if (fd_ >= 0) ::close(fd_);
  }
  UnnamedTemp(const UnnamedTemp&) = delete;
  UnnamedTemp& operator=(const UnnamedTemp&) = delete;
  int fd() const { return fd_; }
  /// Gives the file the name `target`; false with errno set when that fails (EEXIST: taken).
  bool link_to(const std::filesystem::path& target) const {
    const std::string self = "/proc/self/fd/" + std::to_string(fd_);
    if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, target.c_str(), AT_SYMLINK_FOLLOW) == 0) return true;
    if (errno != ENOENT) return false;
    return ::linkat(fd_, "", AT_FDCWD, target.c_str(), AT_EMPTY_PATH) == 0;  // no /proc: needs CAP_DAC_READ_SEARCH
  }

 private:
  int fd_ = -1;
  std::string what_;
};

// Writes content into a fresh file named `tmp` (for file systems without O_TMPFILE). The caller
// registers it with termination::TempPath first.
void write_named_temp(const std::filesystem::path& tmp, std::string_view content) {
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int err = errno;
    throw_errno_error("cannot create " + tmp.string(), err);
  }
  try {
    write_all(fd, content, tmp.string());
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw_errno_error("cannot flush " + tmp.string(), err);
  }
}

void make_parent(const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::create_directories(dir_of(path), ec);
  if (ec) throw_errno_error("cannot create directory " + dir_of(path).string(), ec);
}

void fsync_dir(const std::filesystem::path& path) {
  const int dfd = ::open(dir_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void rename_over(const std::filesystem::path& tmp, const std::filesystem::path& path) {
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw_errno_error("cannot rename " + tmp.string() + " to " + path.string(), err);
  }
}

}  // namespace

void write_file_atomic(const std::filesystem::path& path, std::string_view content) {
  make_parent(path);
  const UnnamedTemp unnamed(path, content);
  const std::filesystem::path tmp = temp_name(path);
  // The temp file has a name only between the link and the rename; a SIGTERM then removes it.
  const termination::TempPath guard(tmp);
  if (unnamed.fd() >= 0) {
    if (!unnamed.link_to(tmp)) {
      const int err = errno;
      throw_errno_error("cannot create " + tmp.string(), err);
    }
  } else {
    write_named_temp(tmp, content);
  }
  rename_over(tmp, path);
  fsync_dir(path);
}

void write_file_atomic_new(const std::filesystem::path& path, std::string_view content) {
  make_parent(path);
  const UnnamedTemp unnamed(path, content);
  if (unnamed.fd() >= 0) {
    // linkat(2) fails with EEXIST instead of replacing: a record is never overwritten, and the
    // file never exists under another name.
    if (!unnamed.link_to(path)) {
      const int err = errno;
      throw_errno_error("cannot create " + path.string(), err);
    }
    fsync_dir(path);
    return;
  }
  const std::filesystem::path tmp = temp_name(path);
  const termination::TempPath guard(tmp);
  write_named_temp(tmp, content);
  if (::link(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw_errno_error("cannot create " + path.string(), err);
  }
  ::unlink(tmp.c_str());
  fsync_dir(path);
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string() + ": cannot open for reading");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw InputError(path.string() + ": read failed");
  return ss.str();
}

}  // namespace atlas
