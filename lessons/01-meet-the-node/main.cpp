// Lesson 01 — Meet the node: which GPUs can this process use? (article claims A1.2, A3.3)
//
// nvidia-smi on the host lists every GPU in the machine; CUDA shows a process only those that
// CUDA_VISIBLE_DEVICES lets through, renumbered from 0. Count both, then put x on the first
// GPU this process may use — or on the CPU, saying why, when it may use none.
#include <string>

#include <torch/torch.h>

#include "gpulab/lesson.h"
#include "gpulab/observe.h"

int main(int argc, char** argv) {
  return gpulab::run_lesson("01", argc, argv, [](gpulab::Lesson& lesson) {
    // What nvidia-smi shows: every physical GPU, whatever this process is allowed to use.
    const auto physical = gpulab::make_observer()->gpus().size();
    lesson.fact("physical_gpus", static_cast<std::int64_t>(physical));
    // What CUDA shows this process.
    const auto visible = torch::cuda::device_count();
    lesson.fact("visible_devices", static_cast<std::int64_t>(visible));
    lesson.say("nvidia-smi shows " + std::to_string(physical) + " GPUs; CUDA shows this process " +
               std::to_string(visible) + ".");

    // TODO: x must land on the first GPU CUDA lets this process use (which physical GPU
    //       that is depends on CUDA_VISIBLE_DEVICES and the node), and when CUDA lets it use
    //       none, on the CPU: the program runs to its end and tells the reader, in a
    //       lesson.say() that mentions the CPU, why. The checks try every GPU visible, a
    //       one-GPU list, lists that hide every GPU, and another node.
    const torch::Device device(torch::kCUDA);
    lesson.fact("device", device.str());

    const auto x = torch::ones({1024, 1024}, device);
    lesson.observe("after creating a tensor", {{"x", x}});

    // STRETCH: also put a tensor y on the GPU with the most memory this process can see
    //          (on a tie, the lowest CUDA index; the CPU when it sees none), observed as
    //          lesson.observe("after creating y", {{"y", y}}). On workstation-mixed the GPUs differ.
  });
}
