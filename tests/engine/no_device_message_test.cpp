// The CUDA backend's message when no device can be used names what is missing: the driver, a
// driver new enough for this build, or a device the driver can see; "no CUDA device" alone left
// the user to guess which.
#include <doctest/doctest.h>

#include <string>

#include "engine/no_device_message.hpp"

using atlas::engine::DeviceProbe;
using atlas::engine::no_device_message;

TEST_CASE("no usable CUDA device: the message names the missing driver, the old driver or the unseen device") {
  CHECK(atlas::engine::cuda_version_text(12040) == "12.4");
  CHECK(atlas::engine::cuda_version_text(11080) == "11.8");

  DeviceProbe p;
  p.answer = DeviceProbe::Answer::insufficient_driver;
  p.runtime_version = 12040;
  // What cudart answers on a machine with no driver: "insufficient driver", driver version 0.
  CHECK(no_device_message(p) ==
        "cuda backend: no usable CUDA device: no NVIDIA driver (libcuda.so.1 not found or not loadable; install the "
        "driver, check nvidia-smi)");
  p.driver_version = 11080;
  CHECK(no_device_message(p) ==
        "cuda backend: no usable CUDA device: the NVIDIA driver supports CUDA 11.8, older than this build's runtime 12.4 "
        "(update the driver)");

  p.answer = DeviceProbe::Answer::no_device;
  p.driver_version = 12040;
  CHECK(no_device_message(p) ==
        "cuda backend: no usable CUDA device: the driver (CUDA 12.4) sees no device (CUDA_VISIBLE_DEVICES unset; "
        "nvidia-smi lists what is installed)");
  p.visible_devices = "";
  CHECK(no_device_message(p) ==
        "cuda backend: no usable CUDA device: the driver (CUDA 12.4) sees no device (CUDA_VISIBLE_DEVICES='': it may hide "
        "them all; nvidia-smi lists what is installed)");

  p.answer = DeviceProbe::Answer::other;
  p.visible_devices.reset();
  p.error_name = "cudaErrorDevicesUnavailable";
  p.error_text = "CUDA-capable device(s) is/are busy or unavailable";
  CHECK(no_device_message(p) ==
        "cuda backend: no usable CUDA device: cudaGetDeviceCount: cudaErrorDevicesUnavailable (CUDA-capable device(s) "
        "is/are busy or unavailable; driver CUDA 12.4, runtime 12.4, CUDA_VISIBLE_DEVICES unset)");
}
