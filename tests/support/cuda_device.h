// cuda(i): the device cuda:<i>, for the tests and test programs that call LibTorch in their
// own process (sim_tests, parallel_tests, memory-probe). Header-only: gpulab_test_support
// itself stays torch-free.
#pragma once

#include <c10/core/Device.h>

namespace gpulab::test {

/// cuda:<index>, as torch::Device("cuda:<index>") would give (torch::Device is c10::Device).
inline c10::Device cuda(int index) { return {c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(index)}; }

}  // namespace gpulab::test
