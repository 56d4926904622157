// Lesson 07 — Which GPU does nvidia-smi call cuda:0? (article claim A2.8)
//
// nvidia-smi (on the host) numbers GPUs in PCI bus order and ignores CUDA_VISIBLE_DEVICES.
// CUDA numbers them in the order CUDA_DEVICE_ORDER names (PCI_BUS_ID, or CUDA's default when
// it is unset), counting only the GPUs it shows this process. What both agree on is the GPU
// itself: its UUID, and its PCI location. The program is given nvidia-smi's UUIDs
// (--smi-uuids, in nvidia-smi's order, as `nvidia-smi -L` prints them: line k is nvidia-smi's
// GPU k) and bus ids (--smi-bus-ids, as
//   nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader
// prints them), maps every CUDA device to nvidia-smi's number and computes on the GPU
// nvidia-smi calls --gpu N.
#include <string>
#include <vector>

#include <torch/torch.h>

#include "gpulab/cuda.h"
#include "gpulab/lesson.h"

// TODO: return nvidia-smi's number of the very GPU this process calls cuda:`cuda_index` (its
//       line in `smi_uuids`), or -1 when nvidia-smi lists no such GPU — right on any node,
//       whatever CUDA_DEVICE_ORDER and CUDA_VISIBLE_DEVICES say.
int nvidia_smi_number(int cuda_index, const std::vector<std::string>& smi_uuids) {
  (void)smi_uuids;
  return cuda_index;  // the article's assumption: CUDA's numbers are nvidia-smi's
}

// STRETCH: the same number found through the GPU's PCI location, given nvidia-smi's bus ids
// in its order ("00000000:3D:00.0"; gpulab::cuda::parse_pci_address and pci_address_of read
// both forms).
int nvidia_smi_number_by_bus_id(int cuda_index, const std::vector<std::string>& smi_bus_ids) {
  (void)cuda_index;
  (void)smi_bus_ids;
  return -1;
}

int main(int argc, char** argv) {
  return gpulab::run_lesson("07", argc, argv, [](gpulab::Lesson& lesson) {
    const std::vector<std::string> smi_uuids = lesson.string_list("--smi-uuids");
    const std::vector<std::string> smi_bus_ids = lesson.string_list("--smi-bus-ids");
    const int wanted = lesson.int_list("--gpu", {0}).front();  // nvidia-smi's number
    if (smi_uuids.empty()) lesson.say("give nvidia-smi's UUIDs with --smi-uuids (what nvidia-smi -L prints)");

    const int count = static_cast<int>(torch::cuda::device_count());
    lesson.fact("device_count", count);
    std::vector<gpulab::NamedTensor> tensors;
    int index_of_wanted = -1;
    for (int i = 0; i < count; ++i) {
      const int number = nvidia_smi_number(i, smi_uuids);
      lesson.fact("nvidia_smi_number_of_cuda:" + std::to_string(i), number);
      if (!smi_bus_ids.empty())
        lesson.fact("nvidia_smi_number_by_bus_id_of_cuda:" + std::to_string(i), nvidia_smi_number_by_bus_id(i, smi_bus_ids));
      lesson.say("cuda:" + std::to_string(i) + " is nvidia-smi's GPU " + std::to_string(number));
      if (number == wanted && index_of_wanted < 0) index_of_wanted = i;
      const torch::Device device(torch::kCUDA, static_cast<c10::DeviceIndex>(i));
      tensors.emplace_back(device.str(), torch::ones({1024}, device));
    }
    if (count > 0) lesson.observe("on cuda:0", {{"first", tensors.front().second}});
    lesson.observe("one tensor per CUDA device", tensors);

    lesson.fact("cuda_index_of_wanted_gpu", index_of_wanted);
    if (index_of_wanted < 0) {
      lesson.say("nvidia-smi's GPU " + std::to_string(wanted) + " is not visible to this process");
      return;
    }
    const torch::Device device(torch::kCUDA, static_cast<c10::DeviceIndex>(index_of_wanted));
    lesson.observe("on the wanted GPU", {{"batch", torch::ones({1024, 1024}, device)}});
  });
}
