#include "gates/base_build.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "gates/measured_process.hpp"

namespace atlas::gates {
namespace {

namespace fs = std::filesystem;

std::string tail(const std::string& s, std::size_t n = 1500) { return s.size() <= n ? s : "..." + s.substr(s.size() - n); }

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

/// flock on a file for the object's lifetime (`wait` false: try once, held() says whether it got it).
class FileLock {
 public:
  explicit FileLock(const fs::path& p, bool wait = true)
      : fd_(::open(p.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644)) {
    if (fd_ >= 0) held_ = ::flock(fd_, wait ? LOCK_EX : LOCK_EX | LOCK_NB) == 0;
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  bool held() const { return held_; }

 private:
  int fd_;
  bool held_ = false;
};

fs::file_time_type last_used(const fs::path& dir) {
  std::error_code ec;
  auto t = fs::last_write_time(dir / "built.ok", ec);
  if (ec) t = fs::last_write_time(dir, ec);
  return ec ? fs::file_time_type::min() : t;
}

}  // namespace

std::string cmake_cache_value(const fs::path& cache_file, const std::string& key) {
  std::ifstream in(cache_file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) != 0) continue;
    const auto eq = line.find('=');
    if (eq != std::string::npos) return line.substr(eq + 1);
  }
  return "";
}

fs::path running_build_dir() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  for (p = p.parent_path(); !p.empty() && p != p.root_path(); p = p.parent_path())
    if (fs::exists(p / "CMakeCache.txt")) return p;
  return {};
}

bool head_is_clean_base(const fs::path& repo, const std::string& base_commit) {
  if (base_commit.empty()) return false;
  const auto head = run_measured({"git", "-C", repo.string(), "rev-parse", "HEAD"}, {});
  if (head.exit_status != 0 || trim(head.out) != base_commit) return false;
  const auto st = run_measured({"git", "-C", repo.string(), "status", "--porcelain", "--untracked-files=no"}, {});
  return st.exit_status == 0 && st.out.empty();
}

std::vector<std::string> prune_base_cache(const fs::path& repo, const fs::path& cache_dir, int keep,
                                          const std::string& current) {
  std::vector<std::pair<fs::file_time_type, fs::path>> dirs;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(cache_dir, ec)) {
    if (!e.is_directory() || e.path().filename() == current) continue;
    dirs.emplace_back(last_used(e.path()), e.path());
  }
  std::sort(dirs.begin(), dirs.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> removed;
  const std::size_t others_kept = keep > 1 ? static_cast<std::size_t>(keep - 1) : 0;  // `current` is one of `keep`
  for (std::size_t i = others_kept; i < dirs.size(); ++i) {
    const fs::path& dir = dirs[i].second;
    const std::string name = dir.filename().string();
    const fs::path lock_file = cache_dir / (name + ".lock");
    FileLock lock(lock_file, /*wait=*/false);
    if (!lock.held()) continue;  // another gate is building or using it
    if (fs::exists(dir / "src"))
      run_measured({"git", "-C", repo.string(), "worktree", "remove", "--force", (dir / "src").string()}, {});
    fs::remove_all(dir, ec);
    if (ec) continue;
    fs::remove(lock_file, ec);
    removed.push_back(name);
  }
  if (!removed.empty()) run_measured({"git", "-C", repo.string(), "worktree", "prune"}, {});
  return removed;
}

fs::path default_base_cache_dir(const fs::path& head_build_dir) {
  if (const char* c = std::getenv("ATLAS_GATE_CACHE"); c && *c) return c;
  if (!head_build_dir.empty()) return head_build_dir / "gate-base";
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "atlas-bench" / "gate-base";
  const char* home = std::getenv("HOME");
  return fs::path(home && *home ? home : "/tmp") / ".cache" / "atlas-bench" / "gate-base";
}

BaseBuild build_base(const BaseBuildRequest& r) {
  BaseBuild out;
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  const std::string short_sha = r.commit.substr(0, 12);
  const fs::path dir = r.cache_dir / short_sha;
  const fs::path src = dir / "src", build = src / "build", stamp = dir / "built.ok";
  const fs::path binary = build / "tools" / "atlas-bench";
  std::error_code ec;
  fs::create_directories(r.cache_dir, ec);
  if (ec) {
    out.error = "cannot create the cache folder " + r.cache_dir.string() + ": " + ec.message();
    return out;
  }
  FileLock lock(r.cache_dir / (short_sha + ".lock"));
  if (fs::exists(stamp) && fs::exists(binary)) {
    fs::last_write_time(stamp, fs::file_time_type::clock::now(), ec);  // most recently used: kept by the pruning
    out.binary = binary;
    out.cached = true;
    out.pruned = prune_base_cache(r.repo, r.cache_dir, r.keep, short_sha);
    out.seconds = elapsed();
    out.log = "reused " + binary.string();
    return out;
  }
  if (!fs::exists(src / ".git")) {
    fs::remove_all(src, ec);
    fs::create_directories(dir, ec);
    run_measured({"git", "-C", r.repo.string(), "worktree", "prune"}, {});
    const auto add = run_measured({"git", "-C", r.repo.string(), "worktree", "add", "--detach", src.string(), r.commit}, {});
    if (add.exit_status != 0) {
      out.error = "git worktree add " + src.string() + " " + short_sha + " failed: " + tail(trim(add.err));
      out.seconds = elapsed();
      return out;
    }
  }
  std::map<std::string, std::string> env = {{"CCACHE_BASEDIR", src.string()}};
  if (!fs::exists(build / "CMakeCache.txt")) {
    std::vector<std::string> cfg = {"cmake", "-S", src.string(), "-B", build.string()};
    const fs::path head_cache = r.head_build_dir / "CMakeCache.txt";
    const std::string gen = r.head_build_dir.empty() ? "" : cmake_cache_value(head_cache, "CMAKE_GENERATOR");
    if (!gen.empty()) cfg.insert(cfg.end(), {"-G", gen});
    for (const char* key : {"CMAKE_BUILD_TYPE", "ATLAS_CUDA", "ATLAS_DATA_DIR", "CMAKE_CXX_COMPILER_LAUNCHER",
                            "CMAKE_CUDA_COMPILER_LAUNCHER"}) {
      std::string v = r.head_build_dir.empty() ? "" : cmake_cache_value(head_cache, key);
      if (v.empty() && std::string(key) == "CMAKE_BUILD_TYPE") v = "Release";
      if (v.empty() && std::string(key).find("LAUNCHER") != std::string::npos &&
          run_measured({"ccache", "--version"}, {}).exit_status == 0)
        v = "ccache";
      if (!v.empty()) cfg.push_back("-D" + std::string(key) + "=" + v);
    }
    const auto c = run_measured(cfg, {}, env);
    if (c.exit_status != 0) {
      out.error = "configuring the merge-base build failed: " + tail(trim(c.out + c.err));
      out.seconds = elapsed();
      return out;
    }
  }
  const int jobs = r.jobs > 0 ? r.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const auto b = run_measured({"cmake", "--build", build.string(), "--target", "atlas-bench", "-j", std::to_string(jobs)},
                              {}, env);
  if (b.exit_status != 0 || !fs::exists(binary)) {
    out.error = "building atlas-bench at the merge-base failed: " + tail(trim(b.out + b.err));
    out.seconds = elapsed();
    return out;
  }
  std::ofstream(stamp) << r.commit << "\n";
  out.binary = binary;
  out.pruned = prune_base_cache(r.repo, r.cache_dir, r.keep, short_sha);
  out.seconds = elapsed();
  out.log = "built " + binary.string();
  return out;
}

}  // namespace atlas::gates
