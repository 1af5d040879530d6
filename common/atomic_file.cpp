#include "common/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "common/error.hpp"

namespace atlas {
namespace {

std::string errno_text() { return std::strerror(errno); }

// Writes content into a fresh temp file beside `path` and returns the temp path.
std::filesystem::path write_temp(const std::filesystem::path& path, std::string_view content) {
  namespace fs = std::filesystem;
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error("cannot create directory " + dir.string() + ": " + ec.message());
  std::random_device rd;
  // Appended piece by piece: GCC 12's -Wrestrict misfires on a chained operator+ here.
  std::string name = ".";
  name += path.filename().string();
  name += ".tmp.";
  name += std::to_string(::getpid());
  name += ".";
  name += std::to_string(rd());
  const fs::path tmp = dir / name;
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw Error("cannot create " + tmp.string() + ": " + errno_text());
  std::size_t off = 0;
  while (off < content.size()) {
    const ssize_t n = ::write(fd, content.data() + off, content.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string why = errno_text();
      ::close(fd);
      ::unlink(tmp.c_str());
      throw Error("cannot write " + tmp.string() + ": " + why);
    }
    off += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const std::string why = errno_text();
    ::unlink(tmp.c_str());
    throw Error("cannot flush " + tmp.string() + ": " + why);
  }
  return tmp;
}

void fsync_dir(const std::filesystem::path& path) {
  const auto dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace

void write_file_atomic(const std::filesystem::path& path, std::string_view content) {
  const auto tmp = write_temp(path, content);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = errno_text();
    ::unlink(tmp.c_str());
    throw Error("cannot rename " + tmp.string() + " to " + path.string() + ": " + why);
  }
  fsync_dir(path);
}

void write_file_atomic_new(const std::filesystem::path& path, std::string_view content) {
  const auto tmp = write_temp(path, content);
  // link(2) fails with EEXIST instead of replacing: a record is never overwritten.
  if (::link(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = errno_text();
    ::unlink(tmp.c_str());
    throw Error("cannot create " + path.string() + ": " + why);
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
