// Lesson 02 — Which physical GPU is cuda:i? (article claims A1.2, A2.6)
//
// nvidia-smi on the host numbers every GPU of the node; CUDA numbers only the GPUs this process can see,
// from 0. Put a tensor on every GPU the process can see, and say for each cuda:i which GPU
// nvidia-smi shows it as.
#include <string>
#include <vector>

#include <torch/torch.h>

#include "gpulab/lesson.h"
#include "gpulab/observe.h"

int main(int argc, char** argv) {
  return gpulab::run_lesson("02", argc, argv, [](gpulab::Lesson& lesson) {
    // nvidia-smi's view (NVML's): every physical GPU, in PCI bus order, with its UUID.
    const std::vector<gpulab::GpuView> smi = gpulab::make_observer()->gpus();

    // TODO: put a tensor x on each GPU this process can see — every one of them, and
    //       nothing beyond them — and record in the fact "nvidia_smi_numbers", in CUDA's
    //       order, the number nvidia-smi shows each of those GPUs as (comma-separated,
    //       cuda:0's number first). The checks compare it with where nvidia-smi sees each
    //       x, under several CUDA_VISIBLE_DEVICES lists and on other nodes.
    const auto count = static_cast<int>(smi.size());  // one per GPU of the node
    std::string numbers;
    for (int index = 0; index < count; ++index) {
      const torch::Device device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
      const auto x = torch::ones({1024, 1024}, device);
      lesson.observe("x on " + device.str(), {{"x", x}});
      numbers += (numbers.empty() ? "" : ",") + std::to_string(index);
    }
    lesson.fact("nvidia_smi_numbers", numbers);

    // STRETCH: make "nvidia_smi_numbers" right on every node and for every form of the list:
    //          on workstation-mixed and pascal-rig (nodes of unlike GPUs), and when
    //          CUDA_VISIBLE_DEVICES names GPUs by UUID (nvidia-smi -L) or holds an entry that
    //          is not a plain number.
  });
}
