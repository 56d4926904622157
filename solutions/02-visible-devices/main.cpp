// Lesson 02 — CUDA_VISIBLE_DEVICES renumbers GPUs (article claims A1.2, A2.6)
//
// Under CUDA_VISIBLE_DEVICES=2,3,4,5 the process sees four GPUs, numbered 0..3 in list
// order: cuda:0 is physical GPU 2, cuda:1 is GPU 3, and so on. Put a tensor on every GPU
// the process can see and compare its CUDA index with nvidia-smi's (physical) number.
#include <string>

#include <torch/torch.h>

#include "gpulab/lesson.h"

int main(int argc, char** argv) {
  return gpulab::run_lesson("02", argc, argv, [](gpulab::Lesson& lesson) {
    // Only the GPUs CUDA_VISIBLE_DEVICES lists exist for this process: valid indices are 0..count-1.
    const auto count = static_cast<int>(torch::cuda::device_count());
    lesson.fact("device_count", static_cast<std::int64_t>(count));

    for (int index = 0; index < count; ++index) {
      const torch::Device device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
      const auto x = torch::ones({1024, 1024}, device);
      lesson.observe("x on " + device.str(), {{"x", x}});
    }
  });
}
