#include "engine/formats/mapped_file.hpp"

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/machine_error.hpp"
#include "engine/error.hpp"

namespace atlas::engine {

namespace {
// A missing or unreadable model is the input's error (3); an mmap the machine cannot serve
// (ENOMEM), an I/O error, no descriptor left are the machine's (4).
[[noreturn]] void fail(const std::filesystem::path& path, const char* call) {
  const int err = errno;
  throw_errno_error<EngineError>(path.string() + ": " + call + " failed", err);
}
}  // namespace

MappedFile::MappedFile(const std::filesystem::path& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(path, "open");
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int saved = errno;
    ::close(fd);
    errno = saved;
    fail(path, "fstat");
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw EngineError(path.string() + ": not a regular file");
  }
  size_ = static_cast<std::size_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int saved = errno;
      ::close(fd);
      errno = saved;
      fail(path, "mmap");
    }
    data_ = static_cast<const std::byte*>(p);
  }
  ::close(fd);  // the mapping keeps its own reference to the file
}

MappedFile::~MappedFile() { release(); }

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)), data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void MappedFile::release() noexcept {
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

std::shared_ptr<const MappedFile> MappedFile::open_shared(const std::filesystem::path& path) {
  return std::make_shared<const MappedFile>(path);
}

}  // namespace atlas::engine
