// atlas-bench data verify: check the data directory against data/manifest.json
// (records/data_manifest.hpp). Exit 0 when every asset matches, 3 naming each problem otherwise.
// atlas-bench data dir: print the data directory this binary uses (common/data_dir.hpp), for
// scripts that have a built binary and want its answer rather than their own.
#include "common/build_paths.hpp"
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "common/exit_code.hpp"
#include "records/data_manifest.hpp"
#include "tools/atlas-bench/command.hpp"

namespace atlas::cli {
namespace {

struct DataArgs {
  std::string data_dir;
  std::string manifest;
};

// The manifest in the source tree this binary was built from, else ./data/manifest.json.
std::string default_manifest() {
  const std::filesystem::path built = std::filesystem::path(ATLAS_SOURCE_DIR) / "data" / "manifest.json";
  std::error_code ec;
  return std::filesystem::is_regular_file(built, ec) ? built.string() : std::string("data/manifest.json");
}

const RegisterCommand kData{{
    "data",
    "Data assets: verify the data directory against data/manifest.json, or print which one is used",
    [](CLI::App& sub, const GlobalOptions& global) -> std::function<int()> {
      auto args = std::make_shared<DataArgs>();
      sub.require_subcommand(1);
      CLI::App* verify = sub.add_subcommand(
          "verify", "Check size and sha256 of every asset; exit 0 when all match, 3 naming missing/altered files");
      verify->add_option("--data-dir", args->data_dir, "Data directory (default: global --data-dir / ATLAS_DATA_DIR)");
      verify->add_option("--manifest", args->manifest, "Manifest file (default: data/manifest.json of the source tree)");
      CLI::App* dir = sub.add_subcommand(
          "dir", "Print the data directory commands use, as an absolute path: the global --data-dir, else "
                 "$ATLAS_DATA_DIR, else ../shared/data beside the checkout, else ./data (docs/environment.md)");
      return [args, verify, dir, &global]() {
        if (dir->parsed()) {
          const std::filesystem::path d = resolve_data_dir(global);
          std::cout << std::filesystem::absolute(d).lexically_normal().string() << "\n";
          return to_int(ExitCode::pass);
        }
        if (!verify->parsed()) return to_int(ExitCode::input_error);
        const std::string data_dir = args->data_dir.empty() ? resolve_data_dir(global) : args->data_dir;
        const std::string manifest_file = args->manifest.empty() ? default_manifest() : args->manifest;
        const auto manifest = records::read_manifest(manifest_file);
        const auto problems = records::verify(manifest, data_dir);
        if (problems.empty()) {
          std::cout << "data verify: " << manifest.assets.size() << " assets OK in " << data_dir << " (" << manifest_file
                    << ")\n";
          return to_int(ExitCode::pass);
        }
        for (const auto& p : problems) std::cerr << "data verify: " << p << "\n";
        std::cerr << "data verify: " << problems.size() << " of " << manifest.assets.size() << " assets failed in "
                  << data_dir << " (" << manifest_file << ")\n";
        return to_int(ExitCode::input_error);
      };
    },
}};

}  // namespace
}  // namespace atlas::cli
