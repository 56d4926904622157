// Lesson 07 — Which GPU does nvidia-smi call cuda:0? (article claim A2.8)
//
// nvidia-smi (on the host) numbers GPUs in PCI bus order and ignores CUDA_VISIBLE_DEVICES.
// CUDA numbers them in the order CUDA_DEVICE_ORDER names (PCI_BUS_ID, or CUDA's default when
// it is unset), counting only the GPUs it shows this process. The one name both agree on is
// the GPU's PCI location. The program is given
// nvidia-smi's list of bus ids (--smi-bus-ids, in nvidia-smi's order, as
//   nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader
// prints them: line k is nvidia-smi's GPU k), maps every CUDA device to nvidia-smi's number
// and computes on the GPU nvidia-smi calls --gpu N.
#include <string>
#include <vector>

#include <torch/torch.h>

#include "gpulab/cuda.h"
#include "gpulab/lesson.h"

// "a,b,c" -> {"a", "b", "c"}; "" -> {}.
std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> items;
  for (std::string::size_type start = 0; !list.empty() && start <= list.size();) {
    const auto comma = list.find(',', start);
    items.push_back(list.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return items;
}

// nvidia-smi's number of cuda:`cuda_index`, or -1 when nvidia-smi lists no such GPU.
// TODO: return nvidia-smi's number of the very GPU this process calls cuda:`cuda_index` (its
//       line in `smi_bus_ids`), or -1 when nvidia-smi lists no such GPU — right on any node,
//       whatever CUDA_DEVICE_ORDER and CUDA_VISIBLE_DEVICES say.
int nvidia_smi_number(int cuda_index, const std::vector<std::string>& smi_bus_ids) {
  (void)smi_bus_ids;
  return cuda_index;  // the article's assumption: CUDA's numbers are nvidia-smi's
}

// STRETCH: the same number found through the GPU's UUID, given nvidia-smi's UUIDs in its
// order (`nvidia-smi -L`: "GPU 1: NVIDIA GeForce RTX 4090 (UUID: GPU-65bd580d-…)").
int nvidia_smi_number_by_uuid(int cuda_index, const std::vector<std::string>& smi_uuids) {
  (void)cuda_index;
  (void)smi_uuids;
  return -1;
}

int main(int argc, char** argv) {
  return gpulab::run_lesson("07", argc, argv, [](gpulab::Lesson& lesson) {
    const std::vector<std::string> smi_bus_ids = split(lesson.option("--smi-bus-ids"));
    const std::vector<std::string> smi_uuids = split(lesson.option("--smi-uuids"));
    const int wanted = lesson.int_list("--gpu", {0}).front();  // nvidia-smi's number
    if (smi_bus_ids.empty())
      lesson.say("give nvidia-smi's bus ids with --smi-bus-ids (what nvidia-smi --query-gpu=pci.bus_id prints)");

    const int count = static_cast<int>(torch::cuda::device_count());
    lesson.fact("device_count", count);
    std::vector<gpulab::NamedTensor> tensors;
    int index_of_wanted = -1;
    for (int i = 0; i < count; ++i) {
      const int number = nvidia_smi_number(i, smi_bus_ids);
      lesson.fact("nvidia_smi_number_of_cuda:" + std::to_string(i), number);
      if (!smi_uuids.empty())
        lesson.fact("nvidia_smi_number_by_uuid_of_cuda:" + std::to_string(i), nvidia_smi_number_by_uuid(i, smi_uuids));
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
