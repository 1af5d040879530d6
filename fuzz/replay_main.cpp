// atlas_fuzz_replay CORPUS_DIR [NAME...]: runs every file of CORPUS_DIR/<name>/ through harness
// <name> (all harnesses when no NAME is given). A harness aborts on a bug, so a clean exit means
// every seed and every regression input still passes. Exit 1 when a harness has no inputs (a
// corpus that went missing must not pass silently) or a name is unknown.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#include "fuzz/replay.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR [NAME...]\n", argv[0]);
    return 2;
  }
  const std::filesystem::path root = argv[1];
  std::vector<std::string> names(argv + 2, argv + argc);
  if (names.empty()) {
    for (const auto& [n, _] : atlas::fuzz::harnesses()) names.push_back(n);
  }
  int failed = 0;
  for (const auto& name : names) {
    const auto it = atlas::fuzz::harnesses().find(name);
    if (it == atlas::fuzz::harnesses().end()) {
      std::fprintf(stderr, "replay: no harness '%s'\n", name.c_str());
      failed = 1;
      continue;
    }
    std::vector<std::filesystem::path> files;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(root / name, ec)) {
      if (e.is_regular_file()) files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      std::ifstream in(f, std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      it->second(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    }
    std::printf("replay: %-18s %4zu inputs ok\n", name.c_str(), files.size());
    if (files.empty()) {
      std::fprintf(stderr, "replay: %s has no inputs under %s\n", name.c_str(), (root / name).string().c_str());
      failed = 1;
    }
  }
  std::filesystem::remove_all(atlas::fuzz::scratch_dir());
  return failed;
}
