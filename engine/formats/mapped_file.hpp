#pragma once
// Read-only memory mapping of a whole file. Model weights stored as float32 are used in place
// from the mapping, so a 16 GB checkpoint is never copied (the page cache is the only copy).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>

namespace atlas::engine {

/// RAII read-only mmap (PROT_READ, MAP_PRIVATE). Move-only; hold it in a shared_ptr and pass
/// that to Model::keep_alive so spans into it stay valid for the model's lifetime.
class MappedFile {
 public:
  /// Maps `path`. Throws EngineError naming the path and the failing system call (open, fstat,
  /// mmap). An empty file maps to an empty span.
  explicit MappedFile(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const std::byte> bytes() const { return {data_, size_}; }
  std::size_t size() const { return size_; }
  const std::filesystem::path& path() const { return path_; }

  /// Convenience: maps `path` into a shared_ptr ready for Model::keep_alive.
  static std::shared_ptr<const MappedFile> open_shared(const std::filesystem::path& path);

 private:
  void release() noexcept;
  std::filesystem::path path_;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace atlas::engine
