// Lesson 01 — Meet the node: which GPUs can this process use? (article claims A1.2, A3.3)
//
// nvidia-smi lists every GPU in the machine; CUDA shows a process only those that
// CUDA_VISIBLE_DEVICES lets through, renumbered from 0. Count both, then put x on the first
// GPU this process may use — or on the CPU, saying why, when it may use none.
#include <cstdint>
#include <string>

#include <torch/torch.h>

#include "gpulab/cuda.h"
#include "gpulab/lesson.h"
#include "gpulab/observe.h"

int main(int argc, char** argv) {
  return gpulab::run_lesson("01", argc, argv, [](gpulab::Lesson& lesson) {
    // What nvidia-smi shows: every physical GPU, whatever this process is allowed to use.
    const auto physical = gpulab::make_observer()->gpus().size();
    lesson.fact("physical_gpus", static_cast<std::int64_t>(physical));
    // What CUDA shows this process (the first CUDA call: it reads CUDA_VISIBLE_DEVICES now).
    const auto visible = torch::cuda::device_count();
    lesson.fact("visible_devices", static_cast<std::int64_t>(visible));
    lesson.say("nvidia-smi shows " + std::to_string(physical) + " GPUs; CUDA shows this process " +
               std::to_string(visible) + ".");

    // Ask CUDA, not nvidia-smi or the variable's text: "", "-1" or an index past the last GPU
    // all hide every GPU. No visible GPU is not an error: run on the CPU and say so.
    const torch::Device device(torch::cuda::is_available() ? torch::kCUDA : torch::kCPU);
    if (device.is_cpu())
      lesson.say("CUDA sees no GPU (check CUDA_VISIBLE_DEVICES): falling back to the CPU.");
    lesson.fact("device", device.str());

    const auto x = torch::ones({1024, 1024}, device);
    lesson.observe("after creating a tensor", {{"x", x}});

    // Stretch: the visible GPU with the most memory; on a tie the lowest CUDA index, so
    // alike GPUs keep y with x on cuda:0.
    int biggest = -1;
    std::uint64_t most = 0;
    for (int index = 0; index < static_cast<int>(visible); ++index) {
      const auto memory = gpulab::cuda::get_device_properties(index).total_memory;
      if (biggest < 0 || memory > most) {
        biggest = index;
        most = memory;
      }
    }
    const torch::Device roomy = biggest < 0 ? torch::Device(torch::kCPU)
                                            : torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(biggest));
    const auto y = torch::ones({1024, 1024}, roomy);
    lesson.observe("after creating y", {{"y", y}});
  });
}
