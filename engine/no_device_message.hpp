#pragma once
// What a machine lacks when the CUDA backend finds no usable device, said in one sentence (the
// error exits 4: the machine's failure, not the input's). "no CUDA device" alone left the user to
// guess between a missing driver, a driver older than the build, and a driver that sees nothing
// (CUDA_VISIBLE_DEVICES may hide every device). Plain data in, so the wording is tested on
// machines without a GPU; the CUDA backend fills the probe from cudart. A build without CUDA
// never gets here: engine/backend_module.cpp says "this build has no CUDA backend".
#include <optional>
#include <string>

namespace atlas::engine {

struct DeviceProbe {
  enum class Answer {
    insufficient_driver,  ///< cudaErrorInsufficientDriver: no driver (version 0) or an older one
    no_device,            ///< cudaErrorNoDevice, or success with a count of 0
    other,                ///< any other cudaGetDeviceCount error
  };
  Answer answer = Answer::no_device;
  int driver_version = 0;   ///< cudaDriverGetVersion: 1000 x major + 10 x minor; 0 = no driver
  int runtime_version = 0;  ///< cudaRuntimeGetVersion, the same encoding
  std::optional<std::string> visible_devices;  ///< CUDA_VISIBLE_DEVICES, when set
  std::string error_name, error_text;  ///< for `other`: cudaGetErrorName / cudaGetErrorString
};

/// "cuda backend: no usable CUDA device: " and what is missing, with the versions or variable
/// that tell it, and what to check next.
std::string no_device_message(const DeviceProbe& probe);

/// "12.4" from 12040 (the CUDA version encoding).
std::string cuda_version_text(int version);

}  // namespace atlas::engine
