// Lesson 08 — CUDA_VISIBLE_DEVICES edge cases (article claim A1.2)
//
// The driver parses the list its own way: the first invalid, unknown or ambiguous entry
// ends it, any duplicate empties it, GPU UUIDs and unique UUID prefixes count, and a
// process sees at most one MIG instance. It never complains: the list you write is not
// always the list you get. Put a tensor on every GPU this process can see, see where each
// one landed, and make the program say so when CUDA did not honour the whole list.
#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "gpulab/lesson.h"

// Elements of the tensor put on each visible GPU.
constexpr std::int64_t kElements = 1024;

// How many GPUs the list names: one per comma-separated entry.
int listed_entries(const std::string& list) {
  if (list.empty()) return 0;
  return 1 + static_cast<int>(std::count(list.begin(), list.end(), ','));
}

// Whether CUDA made visible every GPU that `list` names.
bool list_honoured(const std::string& list, int device_count) {
  // The driver drops entries silently: count what was asked for against what CUDA shows.
  return listed_entries(list) == device_count;
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
    lesson.fact("entries_listed", listed_entries(list));
    lesson.attempt("check the list", [&] {
      if (!list_honoured(list, count))
        throw std::runtime_error("CUDA_VISIBLE_DEVICES=\"" + std::string(list) + "\": expected one GPU per entry (" +
                                 std::to_string(listed_entries(list)) + "), but CUDA made " + std::to_string(count) +
                                 " visible");
    });
  });
}
