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

// nvidia-smi's number of cuda:`cuda_index`, or -1 when nvidia-smi lists no such GPU: the
// GPU's UUID is the same in CUDA's properties and in nvidia-smi -L, whatever the numbering.
int nvidia_smi_number(int cuda_index, const std::vector<std::string>& smi_uuids) {
  const std::string uuid = gpulab::cuda::get_device_properties(cuda_index).uuid;
  for (std::size_t k = 0; k < smi_uuids.size(); ++k)
    if (smi_uuids[k] == uuid) return static_cast<int>(k);
  return -1;
}

// The stretch: the same number through the GPU's PCI location, compared as numbers
// (nvidia-smi writes 00000000:3D:00.0, CUDA 0000:3d:00.0).
int nvidia_smi_number_by_bus_id(int cuda_index, const std::vector<std::string>& smi_bus_ids) {
  const auto mine = gpulab::cuda::pci_address_of(gpulab::cuda::get_device_properties(cuda_index));
  for (std::size_t k = 0; k < smi_bus_ids.size(); ++k)
    if (gpulab::cuda::parse_pci_address(smi_bus_ids[k]) == mine) return static_cast<int>(k);
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
