// Lesson 17 — Inside a container, which host GPU is cuda:1? (beyond the article)
//
// NVIDIA's container runtime gives a container some of the host's GPUs
// (NVIDIA_VISIBLE_DEVICES, docker run --gpus '"device=6,2"', a Kubernetes device plugin).
// Inside, the program knows its GPUs by CUDA's numbers; the operator looks at the host's
// nvidia-smi, which numbers every GPU of the machine. The program trains on
// cuda:--gpu and tells the operator which host GPU that is: its UUID, and its number in the
// host's nvidia-smi, given the host's UUIDs (--host-uuids, as `nvidia-smi -L` prints them on
// the host: line k is the host's GPU k).
#include <string>
#include <vector>

#include <torch/torch.h>

#include "gpulab/cuda.h"
#include "gpulab/lesson.h"

// The UUID of cuda:`cuda_index`, as the host's nvidia-smi -L prints it.
std::string host_uuid_of(int cuda_index) {
  // TODO: the operator must find the GPU this program trains on in the host's nvidia-smi.
  // Report that GPU's identity, one the host shares, not the container's number for it.
  return "GPU " + std::to_string(cuda_index);
}

// The host's nvidia-smi number of cuda:`cuda_index` (-1 when the host's list lacks it).
int host_number_of(int cuda_index, const std::vector<std::string>& host_uuids) {
  // TODO: the number the host's nvidia-smi gives the GPU this program trains on. As shipped
  // it takes the container's numbers for the host's.
  (void)host_uuids;
  return cuda_index;
}

// The stretch: cuda:`cuda_index`'s PCI location as nvidia-smi writes it ("00000000:4E:00.0").
std::string host_bus_id_of(int cuda_index) {
  // TODO (stretch): the bus id the host's nvidia-smi shows for the GPU this program trains on.
  (void)cuda_index;
  return "unknown";
}

int main(int argc, char** argv) {
  return gpulab::run_lesson("17", argc, argv, [](gpulab::Lesson& lesson) {
    const std::vector<std::string> host_uuids = lesson.string_list("--host-uuids");
    const int wanted = lesson.int_list("--gpu", {1}).front();  // the CUDA device to train on
    if (host_uuids.empty()) lesson.say("give the host's UUIDs with --host-uuids (what nvidia-smi -L prints on the host)");

    const int count = static_cast<int>(torch::cuda::device_count());
    lesson.fact("device_count", count);
    std::vector<gpulab::NamedTensor> tensors;
    for (int i = 0; i < count; ++i) {
      const torch::Device device(torch::kCUDA, static_cast<c10::DeviceIndex>(i));
      tensors.emplace_back(device.str(), torch::ones({1024}, device));
    }
    if (count > 0) lesson.observe("on cuda:0", {{"first", tensors.front().second}});
    lesson.observe("one tensor per CUDA device", tensors);
    if (wanted < 0 || wanted >= count) {
      lesson.say("cuda:" + std::to_string(wanted) + " does not exist here: CUDA shows " + std::to_string(count) + " GPUs");
      return;
    }

    const torch::Device device(torch::kCUDA, static_cast<c10::DeviceIndex>(wanted));
    lesson.observe("training", {{"batch", torch::ones({1024, 1024}, device)}});
    const int host_gpu = host_number_of(wanted, host_uuids);
    lesson.fact("trains_on_uuid", host_uuid_of(wanted));
    lesson.fact("trains_on_host_gpu", host_gpu);
    lesson.fact("trains_on_bus_id", host_bus_id_of(wanted));
    lesson.say("training on " + device.str() + ": the host's GPU " + std::to_string(host_gpu) + ", " + host_uuid_of(wanted) +
               ", bus id " + host_bus_id_of(wanted));
  });
}
