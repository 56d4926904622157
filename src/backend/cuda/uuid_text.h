// cudaDeviceProp::uuid in nvidia-smi's form, shared by the NVML observer and
// gpulab::cuda::get_device_properties on real GPUs.
#pragma once

#include <cstdio>
#include <string>

#include <cuda_runtime_api.h>

namespace gpulab {

/// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as `nvidia-smi -L` prints it.
inline std::string uuid_text(const cudaUUID_t& uuid) {
  std::string text = "GPU-";
  for (int i = 0; i < 16; ++i) {
    char hex[3];
    std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(uuid.bytes[i]));
    text += hex;
    if (i == 3 || i == 5 || i == 7 || i == 9) text += '-';
  }
  return text;
}

}  // namespace gpulab
