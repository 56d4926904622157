// Lesson 11 — Does DataParallel load its GPUs evenly? (article claim A3.4)
//
// DataParallel gathers every replica's output on output_device, which defaults to
// device_ids[0], and sums every replica's gradients into the model there: the primary GPU
// carries more than the others. On a machine with unlike GPUs DataParallel also warns when
// one has under 75% of another's memory or SMs. Choose the GPUs, and the primary, for this
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
std::vector<int> choose_device_ids(bool no_warnings) {
  std::vector<int> ids(torch::cuda::device_count());
  std::iota(ids.begin(), ids.end(), 0);
  // DataParallel warns about a GPU with under 75% of the largest memory: leave those out.
  std::uint64_t largest = 0;
  for (int id : ids) largest = std::max(largest, memory_of(id));
  ids.erase(std::remove_if(ids.begin(), ids.end(), [&](int id) { return memory_of(id) < 0.75 * largest; }), ids.end());
  // The primary holds the gathered output and the summed gradients: the most memory goes first.
  std::stable_sort(ids.begin(), ids.end(), [](int a, int b) { return memory_of(a) > memory_of(b); });
  if (!no_warnings) return ids;
  // The stretch: DataParallel also warns when a GPU has under 75% of another's SMs. Keep, in
  // order, only the GPUs within 75% of every one kept so far: the primary stays first.
  std::vector<int> kept;
  for (int id : ids) {
    const int cores = gpulab::cuda::get_device_properties(id).multi_processor_count;
    const bool alike = std::all_of(kept.begin(), kept.end(), [&](int other) {
      const int theirs = gpulab::cuda::get_device_properties(other).multi_processor_count;
      return 4 * std::min(cores, theirs) >= 3 * std::max(cores, theirs);
    });
    if (alike) kept.push_back(id);
  }
  return kept;
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
