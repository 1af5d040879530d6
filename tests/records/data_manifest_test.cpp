#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/atomic_file.hpp"
#include "records/data_manifest.hpp"
#include "records/error.hpp"
#include "tests/test_data.hpp"

namespace fs = std::filesystem;
using atlas::records::RecordError;

namespace {
fs::path manifest_file() { return atlas::test::source_dir() / "data" / "manifest.json"; }

// A scratch copy of the data directory's files listed in the manifest (symlinks would let a
// test alter the shared read-only data; copies cannot).
fs::path scratch_copy(const atlas::records::DataManifest& m, const std::string& name) {
  const auto dir = atlas::test::scratch_dir(name);
  for (const auto& a : m.assets) {
    fs::create_directories((dir / a.path).parent_path());
    fs::copy_file(atlas::test::data_dir() / a.path, dir / a.path);
    // The shared originals are read-only; the copy must be writable so the test can alter it.
    fs::permissions(dir / a.path, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace);
  }
  return dir;
}
}  // namespace

TEST_CASE("data/manifest.json lists the assets with licenses and upstreams") {
  const auto m = atlas::records::read_manifest(manifest_file());
  REQUIRE(m.assets.size() == 23);  // 4 model files, 11 BFCL question files, 8 BFCL answer files
  const auto& bin = m.assets[0];
  CHECK(bin.path == "models/stories260K/stories260K.bin");
  // models/stories260K/SOURCE.md: 1,056,540 bytes, sha256 b0a507e7...
  CHECK(bin.size == 1056540);
  CHECK(bin.sha256 == "b0a507e7ad0f626624f17112325e66691f9076d622e1d3274d103d00299f2696");
  CHECK(bin.license == "MIT");
  bool gguf = false;
  for (const auto& a : m.assets) {
    if (a.path == "models/stories260K-gguf/stories260K.gguf") {
      gguf = true;
      // models/stories260K-gguf/SOURCE.md: 1,185,376 bytes, sha256 270cba1b...
      CHECK(a.size == 1185376);
      CHECK(a.sha256 == "270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d");
    }
    if (a.path.rfind("bfcl/", 0) == 0) CHECK(a.license == "Apache-2.0");
  }
  CHECK(gguf);
}

TEST_CASE("verify passes on the real data and names missing and altered files in a copy") {
  const auto m = atlas::records::read_manifest(manifest_file());
  atlas::test::require_data(atlas::test::data_dir() / "models");
  CHECK(atlas::records::verify(m, atlas::test::data_dir()).empty());
  const auto dir = scratch_copy(m, "manifest_verify");
  CHECK(atlas::records::verify(m, dir).empty());
  fs::remove(dir / "bfcl/BFCL_v4_live_parallel.json");
  {  // same size, one byte changed
    std::fstream f(dir / "models/stories260K/tok512.bin", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('\x7f');
  }
  {  // truncated
    std::ofstream f(dir / "bfcl/possible_answer/BFCL_v4_parallel.json", std::ios::trunc);
    f << "{}\n";
  }
  const auto problems = atlas::records::verify(m, dir);
  REQUIRE(problems.size() == 3);
  CHECK(problems[0].rfind("models/stories260K/tok512.bin: sha256 ", 0) == 0);
  CHECK(problems[0].find("manifest says 037cb335abb25d1fa9e8ecae30ed2a3a8ace9302862ebcdc05d51a6bbb10c312") != std::string::npos);
  CHECK(problems[1].rfind("bfcl/BFCL_v4_live_parallel.json: missing", 0) == 0);
  CHECK(problems[2] == "bfcl/possible_answer/BFCL_v4_parallel.json: size 3 bytes, manifest says 53307");
}

TEST_CASE("asset_hashes and malformed manifests") {
  const auto dir = atlas::test::scratch_dir("manifest_hashes");
  atlas::write_file_atomic(dir / "a/x.txt", "abc");
  const std::vector<std::string> paths{"a/x.txt"};
  const auto h = atlas::records::asset_hashes(dir, paths);
  // FIPS 180-4 example: sha256("abc").
  CHECK(h.at("a/x.txt") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const std::vector<std::string> missing{"nope.bin"};
  CHECK_THROWS_WITH_AS(atlas::records::asset_hashes(dir, missing), doctest::Contains("nope.bin"), RecordError);

  atlas::write_file_atomic(dir / "m.json",
                           R"({"schema_version": 1, "assets": [{"path": "../etc/passwd", "sha256": "00", "size": 1,
                               "license": "MIT", "upstream": "u"}]})");
  CHECK_THROWS_WITH_AS(atlas::records::read_manifest(dir / "m.json"),
                       doctest::Contains("m.json: /assets/0/path: expected a relative path"), RecordError);
  atlas::write_file_atomic(dir / "m2.json",
                           R"({"schema_version": 1, "assets": [{"path": "a", "sha256": "xyz", "size": 1,
                               "license": "MIT", "upstream": "u"}]})");
  CHECK_THROWS_WITH_AS(atlas::records::read_manifest(dir / "m2.json"),
                       doctest::Contains("/assets/0/sha256: expected 64 lower-case hex digits, got \"xyz\""), RecordError);
}
