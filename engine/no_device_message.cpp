#include "engine/no_device_message.hpp"

namespace atlas::engine {

std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

std::string no_device_message(const DeviceProbe& p) {
  const std::string visible =
      p.visible_devices ? "CUDA_VISIBLE_DEVICES='" + *p.visible_devices + "'" : std::string("CUDA_VISIBLE_DEVICES unset");
  std::string m = "cuda backend: no usable CUDA device: ";
  switch (p.answer) {
    case DeviceProbe::Answer::insufficient_driver:
      // cudart answers "insufficient driver" both when libcuda.so.1 cannot be loaded (the
      // driver version then reads 0) and when the driver predates the runtime.
      if (p.driver_version == 0) {
        m += "no NVIDIA driver (libcuda.so.1 not found or not loadable; install the driver, check nvidia-smi)";
      } else {
        m += "the NVIDIA driver supports CUDA " + cuda_version_text(p.driver_version) + ", older than this build's runtime " +
             cuda_version_text(p.runtime_version) + " (update the driver)";
      }
      break;
    case DeviceProbe::Answer::no_device:
      m += "the driver (CUDA " + cuda_version_text(p.driver_version) + ") sees no device (" + visible +
           (p.visible_devices ? ": it may hide them all" : "") + "; nvidia-smi lists what is installed)";
      break;
    case DeviceProbe::Answer::other:
      m += "cudaGetDeviceCount: " + p.error_name + " (" + p.error_text + "; driver CUDA " + cuda_version_text(p.driver_version) + ", runtime " +
           cuda_version_text(p.runtime_version) + ", " + visible + ")";
      break;
  }
  return m;
}

}  // namespace atlas::engine
