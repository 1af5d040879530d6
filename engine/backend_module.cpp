#include "engine/backend_module.hpp"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "common/machine_error.hpp"
#include "engine/error.hpp"

namespace atlas::engine {
namespace {

struct LoadedModule {
  void* handle = nullptr;
  std::string path;
  std::string error;  // why it could not be opened (set once, reported on every call)
  // Whose failure that is: the request's (a build without CUDA, an ATLAS_CUDA_MODULE naming no
  // file: exit 3) or the machine's or the build's (a module that does not load, is not ours, was
  // built from other sources or lacks an entry point: exit 4).
  bool input_error = false;
};

std::atomic<bool> g_loaded{false};

// Places to look, in order. Paths that cannot exist are still listed: the error names them all.
std::vector<std::string> candidates() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("ATLAS_CUDA_MODULE"); env && *env) {
    out.emplace_back(env);
    return out;  // an explicit choice is the only one tried
  }
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) out.push_back((exe.parent_path() / kCudaModuleFile).string());
#ifdef ATLAS_CUDA_MODULE_BUILD_PATH
  out.emplace_back(ATLAS_CUDA_MODULE_BUILD_PATH);
#endif
  out.emplace_back(kCudaModuleFile);  // LD_LIBRARY_PATH, ld.so.cache (an installed copy)
  return out;
}

LoadedModule open_module() {
  LoadedModule m;
#if !defined(ATLAS_HAVE_CUDA)
  if (const char* env = std::getenv("ATLAS_CUDA_MODULE"); !env || !*env) {
    m.error = "this build has no CUDA backend (no CUDA toolkit when it was configured; configure with nvcc available and "
              "-DATLAS_CUDA=ON)";
    m.input_error = true;
    return m;
  }
#endif
  std::string tried;
  const char* env = std::getenv("ATLAS_CUDA_MODULE");
  const bool named = env != nullptr && *env != '\0';
  bool named_missing = false;
  for (const auto& path : candidates()) {
    // A bare file name goes to the loader's search path; anything else must exist.
    const bool bare = path.find('/') == std::string::npos;
    if (!bare && !std::filesystem::exists(path)) {
      tried += "\n  " + path + ": no such file";
      named_missing = named;  // the user named a wrong path; a build's own module missing is the build's failure
      continue;
    }
    dlerror();
    void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      const char* why = dlerror();
      tried += "\n  " + path + ": " + (why ? why : "dlopen failed");
      // A bare name the user gave that the loader's search path does not hold is a wrong name,
      // as a path naming no file is (glibc's dlerror ends in strerror(ENOENT) then).
      if (bare && named && why != nullptr && std::string_view(why).ends_with("No such file or directory")) named_missing = true;
      continue;
    }
    using AbiFn = const char* (*)();
    auto abi = reinterpret_cast<AbiFn>(::dlsym(h, "atlas_cuda_module_abi"));
    if (abi == nullptr) {
      tried += "\n  " + path + ": not an atlas CUDA module (no atlas_cuda_module_abi)";
      ::dlclose(h);
      continue;
    }
    if (const std::string theirs = abi(); theirs != cuda_module_abi()) {
      tried += "\n  " + path + ": built from other sources (module ABI '" + theirs + "', this binary '" +
               cuda_module_abi() + "'): rebuild both";
      ::dlclose(h);
      continue;
    }
    m.handle = h;
    m.path = path;
    g_loaded = true;
    return m;
  }
  m.error = std::string("cannot open the CUDA backend module ") + kCudaModuleFile +
            " (set ATLAS_CUDA_MODULE to its path); tried:" + tried;
  m.input_error = named_missing;
  return m;
}

const LoadedModule& module() {
  // Never closed: backends and CUPTI sources made by the module live until exit.
  static const LoadedModule m = open_module();
  return m;
}

}  // namespace

void* cuda_module_symbol(const char* symbol) {
  const LoadedModule& m = module();
  if (m.handle == nullptr) {
    if (m.input_error) throw EngineError("backend 'cuda': " + m.error);
    throw MachineError("backend 'cuda': " + m.error);
  }
  void* p = ::dlsym(m.handle, symbol);
  if (p == nullptr) throw MachineError("backend 'cuda': " + m.path + " has no entry point '" + symbol + "' (a module from another build)");
  return p;
}

bool cuda_module_loaded() { return g_loaded; }

}  // namespace atlas::engine
