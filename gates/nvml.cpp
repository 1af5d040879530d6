#include "gates/nvml.hpp"

#include <dlfcn.h>

#include <array>
#include <cctype>
#include <cstdio>

namespace atlas::gates {
namespace {

// Types as in nvml.h (the header is not part of the CUDA toolkit install here).
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t kSuccess = 0;
constexpr nvmlReturn_t kInsufficientSize = 7;
constexpr unsigned kTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU
constexpr unsigned kClockSm = 1;         // NVML_CLOCK_SM

struct nvmlUtilization_t {
  unsigned int gpu;
  unsigned int memory;
};
struct nvmlProcessInfo_t {  // the struct nvmlDeviceGetComputeRunningProcesses_v3 fills
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};

struct Reason {
  std::uint64_t bit;
  const char* name;
};
constexpr std::array<Reason, 9> kReasons = {{{0x1, "gpu_idle"},
                                             {0x2, "applications_clocks_setting"},
                                             {0x4, "sw_power_cap"},
                                             {0x8, "hw_slowdown"},
                                             {0x10, "sync_boost"},
                                             {0x20, "sw_thermal_slowdown"},
                                             {0x40, "hw_thermal_slowdown"},
                                             {0x80, "hw_power_brake_slowdown"},
                                             {0x100, "display_clock_setting"}}};

}  // namespace

struct Nvml::Api {
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*get_count)(unsigned int*) = nullptr;
  nvmlReturn_t (*get_handle)(unsigned int, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*get_name)(nvmlDevice_t, char*, unsigned int) = nullptr;
  nvmlReturn_t (*get_utilization)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
  nvmlReturn_t (*get_temperature)(nvmlDevice_t, unsigned, unsigned int*) = nullptr;
  nvmlReturn_t (*get_clock)(nvmlDevice_t, unsigned, unsigned int*) = nullptr;
  nvmlReturn_t (*get_max_clock)(nvmlDevice_t, unsigned, unsigned int*) = nullptr;
  nvmlReturn_t (*get_reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*get_processes)(nvmlDevice_t, unsigned int*, nvmlProcessInfo_t*) = nullptr;
  nvmlReturn_t (*get_driver_version)(char*, unsigned int) = nullptr;

  std::string err(nvmlReturn_t rc) const {
    return error_string ? error_string(rc) : "NVML error " + std::to_string(rc);
  }
};

std::vector<std::string> decode_clocks_event_reasons(std::uint64_t mask) {
  std::vector<std::string> out;
  std::uint64_t known = 0;
  for (const auto& r : kReasons) {
    known |= r.bit;
    if (mask & r.bit) out.emplace_back(r.name);
  }
  for (int b = 0; b < 64; ++b) {
    const std::uint64_t bit = std::uint64_t{1} << b;
    if ((mask & bit) && !(known & bit)) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "bit_0x%llx", static_cast<unsigned long long>(bit));
      out.emplace_back(buf);
    }
  }
  return out;
}

std::uint64_t clocks_event_reason_bit(const std::string& name) {
  for (const auto& r : kReasons) {
    if (name == r.name) return r.bit;
  }
  return 0;
}

bool has_any_reason(std::uint64_t mask, const std::vector<std::string>& names) {
  for (const auto& n : names) {
    if (mask & clocks_event_reason_bit(n)) return true;
  }
  return false;
}

nlohmann::json to_json(const GpuSnapshot& s) {
  nlohmann::json procs = nlohmann::json::array();
  for (const auto& p : s.compute_processes) procs.push_back({{"pid", p.pid}, {"used_bytes", p.used_bytes}});
  auto opt = [](int v) { return v < 0 ? nlohmann::json(nullptr) : nlohmann::json(v); };
  return {{"index", s.index},
          {"name", s.name},
          {"utilization_gpu_percent", opt(s.utilization_gpu_percent)},
          {"utilization_memory_percent", opt(s.utilization_memory_percent)},
          {"temperature_c", opt(s.temperature_c)},
          {"sm_clock_mhz", opt(s.sm_clock_mhz)},
          {"max_sm_clock_mhz", opt(s.max_sm_clock_mhz)},
          {"clocks_event_reasons", s.clocks_event_reasons_known ? nlohmann::json(s.clocks_event_reasons) : nlohmann::json(nullptr)},
          {"clocks_event_reason_names", decode_clocks_event_reasons(s.clocks_event_reasons)},
          {"compute_processes", procs},
          {"errors", s.errors}};
}

std::shared_ptr<Nvml> Nvml::load(std::string& why) {
  void* lib = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = ::dlerror();
    why = e ? e : "libnvidia-ml.so.1: cannot be loaded";
    return nullptr;
  }
  std::shared_ptr<Nvml> n(new Nvml());  // private constructor: make_shared cannot reach it
  n->lib_ = lib;
  n->api_ = std::make_unique<Api>();
  auto& a = *n->api_;
  auto sym = [lib](const char* name) { return ::dlsym(lib, name); };
  a.init = reinterpret_cast<decltype(a.init)>(sym("nvmlInit_v2"));
  a.shutdown = reinterpret_cast<decltype(a.shutdown)>(sym("nvmlShutdown"));
  a.error_string = reinterpret_cast<decltype(a.error_string)>(sym("nvmlErrorString"));
  a.get_count = reinterpret_cast<decltype(a.get_count)>(sym("nvmlDeviceGetCount_v2"));
  a.get_handle = reinterpret_cast<decltype(a.get_handle)>(sym("nvmlDeviceGetHandleByIndex_v2"));
  a.get_name = reinterpret_cast<decltype(a.get_name)>(sym("nvmlDeviceGetName"));
  a.get_utilization = reinterpret_cast<decltype(a.get_utilization)>(sym("nvmlDeviceGetUtilizationRates"));
  a.get_temperature = reinterpret_cast<decltype(a.get_temperature)>(sym("nvmlDeviceGetTemperature"));
  a.get_clock = reinterpret_cast<decltype(a.get_clock)>(sym("nvmlDeviceGetClockInfo"));
  a.get_max_clock = reinterpret_cast<decltype(a.get_max_clock)>(sym("nvmlDeviceGetMaxClockInfo"));
  // Renamed in CUDA 12.2's NVML; the old name stays exported by older drivers.
  a.get_reasons = reinterpret_cast<decltype(a.get_reasons)>(sym("nvmlDeviceGetCurrentClocksEventReasons"));
  if (!a.get_reasons) a.get_reasons = reinterpret_cast<decltype(a.get_reasons)>(sym("nvmlDeviceGetCurrentClocksThrottleReasons"));
  a.get_processes = reinterpret_cast<decltype(a.get_processes)>(sym("nvmlDeviceGetComputeRunningProcesses_v3"));
  a.get_driver_version = reinterpret_cast<decltype(a.get_driver_version)>(sym("nvmlSystemGetDriverVersion"));
  if (!a.init || !a.shutdown || !a.get_count || !a.get_handle) {
    why = "libnvidia-ml.so.1 lacks nvmlInit_v2/nvmlShutdown/nvmlDeviceGetCount_v2/nvmlDeviceGetHandleByIndex_v2";
    return nullptr;  // the destructor closes the library; nothing was initialised
  }
  const nvmlReturn_t rc = a.init();
  if (rc != kSuccess) {
    why = "nvmlInit_v2 failed: " + a.err(rc);
    return nullptr;
  }
  n->initialised_ = true;
  return n;
}

Nvml::~Nvml() {
  if (initialised_) api_->shutdown();
  if (lib_) ::dlclose(lib_);
}

std::string gpu_machine_class(const std::string& gpu_name, unsigned count) {
  std::string s;
  for (char c : gpu_name) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s.rfind("nvidia ", 0) == 0) s = s.substr(7);
  std::string out;
  for (char c : s) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.';
    if (keep) {
      out += c;
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  if (out.empty()) out = "gpu";
  if (count > 1) out += "-x" + std::to_string(count);
  return out;
}

std::string Nvml::driver_version() const {
  char buf[96] = {0};
  if (api_->get_driver_version && api_->get_driver_version(buf, sizeof buf) == kSuccess) return buf;
  return "";
}

unsigned Nvml::device_count() const {
  unsigned n = 0;
  return api_->get_count(&n) == kSuccess ? n : 0;
}

GpuSnapshot Nvml::clocks(unsigned index) const {
  GpuSnapshot s;
  s.index = index;
  const auto& a = *api_;
  nvmlDevice_t dev = nullptr;
  if (const auto rc = a.get_handle(index, &dev); rc != kSuccess) {
    s.errors.push_back("nvmlDeviceGetHandleByIndex_v2: " + a.err(rc));
    return s;
  }
  unsigned long long reasons = 0;
  if (!a.get_reasons) {
    s.errors.push_back("clocks-event reasons: entry point missing");
  } else if (const auto rc = a.get_reasons(dev, &reasons); rc == kSuccess) {
    s.clocks_event_reasons = reasons;
    s.clocks_event_reasons_known = true;
  } else {
    s.errors.push_back("nvmlDeviceGetCurrentClocksEventReasons: " + a.err(rc));
  }
  unsigned mhz = 0;
  if (a.get_clock && a.get_clock(dev, kClockSm, &mhz) == kSuccess) s.sm_clock_mhz = static_cast<int>(mhz);
  return s;
}

GpuSnapshot Nvml::snapshot(unsigned index, bool with_processes) const {
  GpuSnapshot s = clocks(index);
  const auto& a = *api_;
  nvmlDevice_t dev = nullptr;
  if (a.get_handle(index, &dev) != kSuccess) return s;
  char name[96] = {0};
  if (a.get_name && a.get_name(dev, name, sizeof name) == kSuccess) s.name = name;
  nvmlUtilization_t u{};
  if (!a.get_utilization) {
    s.errors.push_back("utilization: entry point missing");
  } else if (const auto rc = a.get_utilization(dev, &u); rc == kSuccess) {
    s.utilization_gpu_percent = static_cast<int>(u.gpu);
    s.utilization_memory_percent = static_cast<int>(u.memory);
  } else {
    s.errors.push_back("nvmlDeviceGetUtilizationRates: " + a.err(rc));
  }
  unsigned t = 0;
  if (a.get_temperature && a.get_temperature(dev, kTemperatureGpu, &t) == kSuccess) {
    s.temperature_c = static_cast<int>(t);
  } else {
    s.errors.push_back("nvmlDeviceGetTemperature failed");
  }
  unsigned mhz = 0;
  if (a.get_max_clock && a.get_max_clock(dev, kClockSm, &mhz) == kSuccess) s.max_sm_clock_mhz = static_cast<int>(mhz);
  if (with_processes && a.get_processes) {
    std::vector<nvmlProcessInfo_t> infos(64);
    for (int tries = 0; tries < 3; ++tries) {
      unsigned count = static_cast<unsigned>(infos.size());
      const auto rc = a.get_processes(dev, &count, infos.data());
      if (rc == kInsufficientSize) {
        infos.resize(count + 16);
        continue;
      }
      if (rc != kSuccess) {
        s.errors.push_back("nvmlDeviceGetComputeRunningProcesses_v3: " + a.err(rc));
        break;
      }
      for (unsigned i = 0; i < count; ++i) s.compute_processes.push_back({infos[i].pid, infos[i].usedGpuMemory});
      break;
    }
  } else if (with_processes) {
    s.errors.push_back("compute processes: entry point missing");
  }
  return s;
}

}  // namespace atlas::gates
