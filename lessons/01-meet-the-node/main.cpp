// Lesson 01 — Meet the node: physical GPUs vs the GPUs CUDA lets this process see
// (article claims A1.2, A3.3)
//
// nvidia-smi lists every GPU in the machine; CUDA shows a process only those that
// CUDA_VISIBLE_DEVICES lets through, renumbered from 0. Count both, then put a tensor on
// the default GPU (cuda:0) — or on the CPU, with a clear message, when CUDA sees no GPU.
#include <string>

#include <torch/torch.h>

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

    // TODO: use the GPU only when CUDA can see one (torch::cuda::is_available());
    // otherwise pick the CPU and lesson.say() why.
    const torch::Device device(torch::kCUDA);
    lesson.fact("device", device.str());

    const auto x = torch::ones({1024, 1024}, device);
    lesson.observe("after creating a tensor", {{"x", x}});
  });
}
