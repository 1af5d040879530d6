#include "records/data_manifest.hpp"

#include <algorithm>
#include <regex>
#include <set>
#include <system_error>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/json_file.hpp"
#include "common/sha256.hpp"
#include "records/error.hpp"

namespace atlas::records {
namespace fs = std::filesystem;
namespace {

using nlohmann::json;

[[noreturn]] void bad(const fs::path& file, const std::string& where, const std::string& what, const json& got) {
  std::string shown = got.dump(-1, ' ', false, json::error_handler_t::replace);
  if (shown.size() > 80) shown = shown.substr(0, 77) + "...";
  throw RecordError(file.string() + ": " + where + ": " + what + ", got " + shown);
}

std::string str(const fs::path& file, const json& obj, const std::string& where, const char* key) {
  const auto it = obj.find(key);
  if (it == obj.end()) throw RecordError(file.string() + ": " + where + "/" + key + ": required field is missing");
  if (!it->is_string() || it->get<std::string>().empty()) bad(file, where + "/" + key, "expected a non-empty string", *it);
  return it->get<std::string>();
}

bool safe_relative(const std::string& p) {
  if (p.empty() || p.front() == '/') return false;
  for (const auto& part : fs::path(p)) {
    if (part == ".." || part == ".") return false;
  }
  return true;
}

}  // namespace

DataManifest read_manifest(const fs::path& file) {
  json j;
  try {
    j = read_json_file(file);
  } catch (const RecordError&) {
    throw;
  } catch (const atlas::Error& e) {
    throw RecordError(e.what());
  }
  if (!j.is_object()) bad(file, "/", "expected a manifest object", j);
  DataManifest m;
  const auto version = j.find("schema_version");
  if (version == j.end() || !version->is_number_integer()) {
    bad(file, "/schema_version", "expected an integer", version == j.end() ? json(nullptr) : *version);
  }
  if (version->get<int>() != 1) bad(file, "/schema_version", "unsupported manifest version (this build reads 1)", *version);
  const auto assets = j.find("assets");
  if (assets == j.end() || !assets->is_array()) {
    bad(file, "/assets", "expected an array", assets == j.end() ? json(nullptr) : *assets);
  }
  static const std::regex hex64("^[0-9a-f]{64}$");
  std::set<std::string> seen;
  for (std::size_t i = 0; i < assets->size(); ++i) {
    const json& a = (*assets)[i];
    const std::string w = "/assets/" + std::to_string(i);
    if (!a.is_object()) bad(file, w, "expected an asset object", a);
    DataAsset d;
    d.path = str(file, a, w, "path");
    if (!safe_relative(d.path)) bad(file, w + "/path", "expected a relative path without '.' or '..'", a["path"]);
    if (!seen.insert(d.path).second) bad(file, w + "/path", "duplicate asset path", a["path"]);
    d.sha256 = str(file, a, w, "sha256");
    if (!std::regex_match(d.sha256, hex64)) bad(file, w + "/sha256", "expected 64 lower-case hex digits", a["sha256"]);
    const auto size = a.find("size");
    if (size == a.end() || !size->is_number_unsigned()) {
      bad(file, w + "/size", "expected a byte count >= 0", size == a.end() ? json(nullptr) : *size);
    }
    d.size = size->get<std::uint64_t>();
    d.license = str(file, a, w, "license");
    d.upstream = str(file, a, w, "upstream");
    if (const auto s = a.find("source"); s != a.end()) {
      if (!s->is_string()) bad(file, w + "/source", "expected a string", *s);
      d.source = s->get<std::string>();
    }
    m.assets.push_back(std::move(d));
  }
  return m;
}

std::vector<std::string> verify(const DataManifest& manifest, const fs::path& data_dir) {
  std::vector<std::string> problems;
  for (const auto& a : manifest.assets) {
    const fs::path p = data_dir / a.path;
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) {
      problems.push_back(a.path + ": missing (" + p.string() + ")");
      continue;
    }
    const auto size = fs::file_size(p, ec);
    if (ec) {
      problems.push_back(a.path + ": cannot read size (" + ec.message() + ")");
      continue;
    }
    if (size != a.size) {
      problems.push_back(a.path + ": size " + std::to_string(size) + " bytes, manifest says " + std::to_string(a.size));
      continue;
    }
    try {
      const std::string sha = sha256_file_hex(p);
      if (sha != a.sha256) problems.push_back(a.path + ": sha256 " + sha + ", manifest says " + a.sha256);
    } catch (const atlas::Error& e) {
      problems.push_back(a.path + ": " + e.what());
    }
  }
  return problems;
}

std::map<std::string, std::string> asset_hashes(const fs::path& data_dir, std::span<const std::string> relative_paths) {
  std::map<std::string, std::string> out;
  for (const auto& rel : relative_paths) {
    try {
      out[rel] = sha256_file_hex(data_dir / rel);
    } catch (const atlas::Error& e) {
      throw RecordError(std::string("data asset ") + rel + ": " + e.what());
    }
  }
  return out;
}

}  // namespace atlas::records
