// Lesson 11 — Does DataParallel load its GPUs evenly? (article claim A3.4)
//
// DataParallel on a machine with unlike GPUs. Choose the GPUs, and the primary, for this
// machine.
#include <algorithm>
#include <numeric>

#include <torch/torch.h>

#include "gpulab/cuda.h"
#include "gpulab/data_parallel.h"
#include "gpulab/lesson.h"

// torch.cuda.get_device_properties(index).total_memory
std::uint64_t memory_of(int index) { return gpulab::cuda::get_device_properties(index).total_memory; }

// The CUDA indices DataParallel should use, device_ids[0] first.
// TODO: DataParallel must not warn about any GPU for its memory (leave out every GPU with
//       less than 75% of the largest one's memory), and the primary must be the GPU with
//       the most memory.
// STRETCH: when the program runs with --no-warnings, DataParallel must warn about nothing,
//          cores included, and the GPU with the most memory must still be the primary.
std::vector<int> choose_device_ids(bool no_warnings) {
  (void)no_warnings;
  std::vector<int> ids(torch::cuda::device_count());
  std::iota(ids.begin(), ids.end(), 0);
  return ids;
}

int main(int argc, char** argv) {
  return gpulab::run_lesson("11", argc, argv, [](gpulab::Lesson& lesson) {
    torch::manual_seed(0);
    const auto& args = lesson.args();
    const bool no_warnings = std::find(args.begin(), args.end(), "--no-warnings") != args.end();
    const std::vector<int> device_ids = choose_device_ids(no_warnings);
    lesson.fact("device_ids", static_cast<std::int64_t>(device_ids.size()));
    lesson.fact("primary", device_ids.front());

    torch::nn::Linear model(/*in_features=*/2048, /*out_features=*/2048);
    model->to(torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(device_ids.front())));
    gpulab::DataParallel parallel(model, device_ids);  // warns here if the GPUs are unlike

    const auto output = parallel.forward(torch::randn({/*batch=*/512, 2048}));
    output.pow(2).mean().backward();
    lesson.observe("after backward", {{"weight", model->weight},
                                      {"weight.grad", model->weight.grad()},
                                      {"output", output}});
  });
}
