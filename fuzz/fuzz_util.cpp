#include <fstream>
#include <map>
#include <unistd.h>

#include "fuzz/fuzz_target.hpp"
#include "fuzz/replay.hpp"

namespace atlas::fuzz {

std::map<std::string, Harness>& harnesses() {
  static std::map<std::string, Harness> m;
  return m;
}

bool register_harness(const char* name, Harness h) {
  harnesses().emplace(name, h);
  return true;
}

std::filesystem::path scratch_dir() {
  static const std::filesystem::path dir = [] {
    const std::filesystem::path base = std::filesystem::is_directory("/dev/shm") ? std::filesystem::path("/dev/shm") : std::filesystem::temp_directory_path();
    auto d = base / ("atlas-fuzz-" + std::to_string(::getpid()));
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

std::filesystem::path scratch_file(const std::string& name, const std::uint8_t* data, std::size_t size) {
  const auto p = scratch_dir() / name;
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  check(static_cast<bool>(out), "scratch file written");
  return p;
}

}  // namespace atlas::fuzz
