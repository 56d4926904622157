// Lesson 08 — What does CUDA make of an unusual CUDA_VISIBLE_DEVICES list? (article claim A1.2)
//
// The driver parses the list its own way: the first invalid, unknown or ambiguous entry
// ends it, any duplicate empties it, GPU UUIDs and unique UUID prefixes count, and a
// process sees at most one MIG instance. It never complains: the list you write is not
// always the list you get. The program puts a tensor on every GPU it can see, then checks
// the list it was started with.
#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "gpulab/cuda.h"
#include "gpulab/lesson.h"

// Elements of the tensor put on each visible GPU.
constexpr std::int64_t kElements = 1024;

// The GPUs this process got, as `nvidia-smi -L` names them: "cuda:0 = GPU-…, cuda:1 = GPU-…".
std::string gpus_got() {
  std::string got;
  for (int i = 0; i < static_cast<int>(torch::cuda::device_count()); ++i)
    got += (i == 0 ? "cuda:" : ", cuda:") + std::to_string(i) + " = " + gpulab::cuda::get_device_properties(i).uuid;
  return got.empty() ? "no GPU" : got;
}

// What to tell the user about CUDA_VISIBLE_DEVICES=`list` once CUDA has read it: nothing when
// CUDA honoured every entry, otherwise that it ignored some and which GPUs this process got.
std::string what_cuda_ignored(const std::string& list) {
  const int count = static_cast<int>(torch::cuda::device_count());
  const int entries = static_cast<int>(gpulab::split(list).size());
  // The driver drops entries silently: count what was asked for against what CUDA shows.
  if (entries == count) return "";
  return "CUDA_VISIBLE_DEVICES=\"" + list + "\" lists " + std::to_string(entries) + " GPUs, but CUDA ignored " +
         std::to_string(entries - count) + " of them; this process got " + gpus_got();
}

// STRETCH: a CUDA_VISIBLE_DEVICES value that names exactly the GPUs this process got, one
// entry each, so that the next run gets them with no entry ignored.
std::string same_gpus_list() {
  std::string list;
  for (int i = 0; i < static_cast<int>(torch::cuda::device_count()); ++i)
    list += (i == 0 ? "" : ",") + gpulab::cuda::get_device_properties(i).uuid;
  return list;
}

int main(int argc, char** argv) {
  return gpulab::run_lesson("08", argc, argv, [](gpulab::Lesson& lesson) {
    const int count = static_cast<int>(torch::cuda::device_count());
    lesson.fact("device_count", count);

    std::vector<gpulab::NamedTensor> tensors;
    for (int i = 0; i < count; ++i) {
      const torch::Device device(torch::kCUDA, static_cast<c10::DeviceIndex>(i));
      tensors.emplace_back(device.str(), torch::ones({kElements}, device));
    }
    if (count == 0) lesson.say("this process sees no GPU");
    lesson.observe("one tensor per visible GPU", tensors);

    const char* list = std::getenv("CUDA_VISIBLE_DEVICES");
    if (list == nullptr) return;  // unset: every GPU is visible
    lesson.attempt("check the list", [&] {
      const std::string complaint = what_cuda_ignored(list);
      if (!complaint.empty()) throw std::runtime_error(complaint);
    });
    lesson.fact("same_gpus_list", same_gpus_list());
  });
}
