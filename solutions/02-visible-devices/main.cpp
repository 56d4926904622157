// Lesson 02 — Which physical GPU is cuda:i? (article claims A1.2, A2.6)
//
// nvidia-smi numbers every GPU of the node; CUDA numbers only the GPUs this process can see,
// from 0. Put a tensor on every GPU the process can see, and say for each cuda:i which GPU
// nvidia-smi shows it as.
#include <string>
#include <vector>

#include <torch/torch.h>

#include "gpulab/cuda.h"
#include "gpulab/lesson.h"
#include "gpulab/observe.h"

int main(int argc, char** argv) {
  return gpulab::run_lesson("02", argc, argv, [](gpulab::Lesson& lesson) {
    // nvidia-smi's view (NVML's): every physical GPU, in PCI bus order, with its UUID.
    const std::vector<gpulab::GpuView> smi = gpulab::make_observer()->gpus();

    // Only the GPUs CUDA_VISIBLE_DEVICES lets through exist for this process: 0..count-1.
    const auto count = static_cast<int>(torch::cuda::device_count());
    std::string numbers;
    for (int index = 0; index < count; ++index) {
      const torch::Device device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
      const auto x = torch::ones({1024, 1024}, device);
      lesson.observe("x on " + device.str(), {{"x", x}});
      // The UUID names the physical GPU whatever the list, its order or its form (indices
      // or UUIDs) and CUDA_DEVICE_ORDER: find the nvidia-smi row with the same one.
      const std::string uuid = gpulab::cuda::get_device_properties(index).uuid;
      int number = -1;
      for (const auto& gpu : smi)
        if (gpu.uuid == uuid) number = gpu.physical_index;
      numbers += (numbers.empty() ? "" : ",") + std::to_string(number);
    }
    lesson.fact("nvidia_smi_numbers", numbers);
  });
}
