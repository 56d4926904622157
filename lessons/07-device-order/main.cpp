// Lesson 07 — CUDA order vs nvidia-smi order (article claim A2.8)
//
// nvidia-smi numbers GPUs in PCI bus order. CUDA numbers them FASTEST_FIRST unless
// CUDA_DEVICE_ORDER=PCI_BUS_ID, and CUDA_VISIBLE_DEVICES counts in CUDA's numbers. On this
// mixed workstation cuda:0 is not nvidia-smi's GPU 0. Map one numbering to the other and
// compute on the GPU nvidia-smi calls kSmiGpu (or the number given as first argument).
#include <algorithm>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "gpulab/lesson.h"
#include "gpulab/observe.h"

// The GPU we want, by the number nvidia-smi shows for it.
constexpr int kSmiGpu = 0;

// nvidia-smi's number of each CUDA device of this process, in CUDA index order. (With
// the CUDA runtime: match cudaDeviceGetPCIBusId against `nvidia-smi --query-gpu=index,pci.bus_id`.)
std::vector<int> nvidia_smi_numbers() {
  std::vector<int> numbers;
  for (int i = 0; i < static_cast<int>(torch::cuda::device_count()); ++i)
    numbers.push_back(gpulab::physical_index_of(torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(i))));
  return numbers;
}

// The CUDA index of nvidia-smi's GPU `smi_gpu`, or -1 when this process cannot see it.
int cuda_index_of(int smi_gpu, const std::vector<int>& smi_numbers) {
  // TODO: CUDA numbers are not nvidia-smi numbers. Find smi_gpu in smi_numbers: its position is the CUDA index.
  return smi_gpu < static_cast<int>(smi_numbers.size()) ? smi_gpu : -1;
}

int main(int argc, char** argv) {
  return gpulab::run_lesson("07", argc, argv, [](gpulab::Lesson& lesson) {
    const int smi_gpu = lesson.args().empty() ? kSmiGpu : std::stoi(lesson.args()[0]);
    const std::vector<int> smi_numbers = nvidia_smi_numbers();
    lesson.fact("device_count", static_cast<std::int64_t>(smi_numbers.size()));
    for (std::size_t i = 0; i < smi_numbers.size(); ++i) {
      lesson.fact("nvidia_smi_number_of_cuda:" + std::to_string(i), smi_numbers[i]);
      lesson.say("cuda:" + std::to_string(i) + " is nvidia-smi's GPU " + std::to_string(smi_numbers[i]));
    }
    if (!smi_numbers.empty()) lesson.observe("on cuda:0", {{"first", torch::ones({1024, 1024}, torch::kCUDA)}});

    const int index = cuda_index_of(smi_gpu, smi_numbers);
    lesson.fact("cuda_index_of_wanted_gpu", index);
    if (index < 0) {
      lesson.say("nvidia-smi's GPU " + std::to_string(smi_gpu) + " is not visible to this process");
      return;
    }
    const auto batch = torch::ones({1024, 1024}, torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index)));
    lesson.observe("on the wanted GPU", {{"batch", batch}});
  });
}
