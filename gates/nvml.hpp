#pragma once
// NVML loaded at run time (dlopen "libnvidia-ml.so.1"), so the gate builds and runs on CPU-only
// machines: without the driver, Nvml::load() reports why and the GPU section is "n/a".
// Only the handful of entry points the quiet-box check needs are declared, with the
// signatures documented in NVIDIA's nvml.h (NVML API Reference, "Device Queries").
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace atlas::gates {

struct GpuProcess {
  unsigned pid = 0;                 ///< host pid (differs from ours inside a pid namespace)
  unsigned long long used_bytes = 0;
};

/// One reading of one device.
struct GpuSnapshot {
  unsigned index = 0;
  std::string name;
  int utilization_gpu_percent = -1;     ///< -1 when the query failed / is unsupported
  int utilization_memory_percent = -1;
  int temperature_c = -1;
  int sm_clock_mhz = -1;
  int max_sm_clock_mhz = -1;
  std::uint64_t clocks_event_reasons = 0;  ///< nvmlDeviceGetCurrentClocksEventReasons bitmask
  bool clocks_event_reasons_known = false;
  std::vector<GpuProcess> compute_processes;
  std::vector<std::string> errors;         ///< queries that failed, with NVML's error string
};

/// Names of the set bits (nvml.h nvmlClocksEventReason*): gpu_idle 0x1,
/// applications_clocks_setting 0x2, sw_power_cap 0x4, hw_slowdown 0x8, sync_boost 0x10,
/// sw_thermal_slowdown 0x20, hw_thermal_slowdown 0x40, hw_power_brake_slowdown 0x80,
/// display_clock_setting 0x100; unknown bits as "bit_0x...".
std::vector<std::string> decode_clocks_event_reasons(std::uint64_t mask);
/// The bit of a reason name, 0 for an unknown name.
std::uint64_t clocks_event_reason_bit(const std::string& name);
/// True when any of `names` is set in `mask`.
bool has_any_reason(std::uint64_t mask, const std::vector<std::string>& names);

nlohmann::json to_json(const GpuSnapshot& s);

/// Machine class of a GPU box from the device name, naming its baseline folder:
/// "NVIDIA H200" -> "h200", "NVIDIA H100 80GB HBM3" -> "h100-80gb-hbm3"; `count` > 1 appends
/// "-x<count>" ("h200-x8"). Lower case, [a-z0-9.-] only.
std::string gpu_machine_class(const std::string& gpu_name, unsigned count = 1);

/// A loaded, initialised NVML. Thread-safe per NVML's documentation.
class Nvml {
 public:
  /// Loads and initialises NVML; returns null and sets `why` when the library, a required
  /// symbol or nvmlInit fails (e.g. "libnvidia-ml.so.1: cannot open shared object file").
  static std::shared_ptr<Nvml> load(std::string& why);
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  unsigned device_count() const;
  /// nvmlSystemGetDriverVersion, "" when unavailable.
  std::string driver_version() const;
  GpuSnapshot snapshot(unsigned index, bool with_processes = true) const;
  /// Only the clocks-event reasons and SM clock (cheap; the monitor polls this).
  GpuSnapshot clocks(unsigned index) const;

  struct Api;  // resolved entry points (nvml.cpp)

 private:
  Nvml() = default;
  void* lib_ = nullptr;
  bool initialised_ = false;
  std::unique_ptr<Api> api_;
};

}  // namespace atlas::gates
