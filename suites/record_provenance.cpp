#include "suites/record_provenance.hpp"

#include <unistd.h>

#include <string>

#include "common/sha256.hpp"
#include "records/provenance.hpp"

extern char** environ;

namespace atlas::suites {

void fill_run_provenance(records::Record& r, const std::filesystem::path& repo_dir) {
  r.git = records::collect_git(repo_dir);
  r.build = records::build_info();
  r.machine = records::collect_machine();
}

namespace {
std::string asset_name(const std::filesystem::path& file, const std::filesystem::path& data_dir) {
  std::error_code ec;
  const auto abs_file = std::filesystem::weakly_canonical(file, ec);
  const auto abs_dir = std::filesystem::weakly_canonical(data_dir, ec);
  const auto rel = abs_file.lexically_relative(abs_dir);
  if (!data_dir.empty() && !rel.empty() && *rel.begin() != "..") return rel.generic_string();
  return abs_file.generic_string();
}
}  // namespace

void fill_model_provenance(records::Record& r, EngineTarget& target, const std::filesystem::path& data_dir) {
  auto& model = target.engine().model();
  // Relative to the data directory when under it: records from two machines (or checkouts)
  // name the same model the same way.
  r.model.path = std::filesystem::exists(model.source.path) ? asset_name(model.source.path, data_dir)
                                                             : model.source.path.string();
  r.model.format = model.source.format;
  r.model.architecture = engine::to_string(model.config.arch);
  r.model.parameter_count = model.config.parameter_count();
  if (std::filesystem::is_regular_file(model.source.path)) {
    r.model.sha256 = atlas::sha256_file_hex(model.source.path);
    r.data_assets[asset_name(model.source.path, data_dir)] = r.model.sha256;
  }
  r.config["engine"] = target.provenance()["options"];
  const std::string tok = r.config["engine"].value("tokenizer", "");
  std::filesystem::path tok_path = tok;
  if (tok.empty() && model.source.format == "llama2c") {
    // llama2.c checkpoints take tok<vocab>.bin from beside the model file by default.
    tok_path = model.source.path.parent_path() / ("tok" + std::to_string(model.config.vocab_size) + ".bin");
  }
  if (!tok_path.empty() && std::filesystem::is_regular_file(tok_path)) {
    r.data_assets[asset_name(tok_path, data_dir)] = atlas::sha256_file_hex(tok_path);
  }
}

nlohmann::json atlas_environment() {
  nlohmann::json env = nlohmann::json::object();
  for (char** e = environ; e && *e; ++e) {
    const std::string kv = *e;
    if (kv.rfind("ATLAS_", 0) != 0) continue;
    const auto eq = kv.find('=');
    env[kv.substr(0, eq)] = eq == std::string::npos ? "" : kv.substr(eq + 1);
  }
  return env;
}

}  // namespace atlas::suites
