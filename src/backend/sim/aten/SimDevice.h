// The simulated backend's name for a CUDA device, shared by its guard and its kernels.
#pragma once

#include <c10/core/Device.h>

namespace gpulab::sim {

/// cuda:`index`.
inline c10::Device cuda(int index) { return {c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(index)}; }

}  // namespace gpulab::sim
