// Lesson 10 — DataParallel on GPUs 2 and 3: which GPUs does the process touch? (article claim A3.2)
//
// The article's setup: the model on cuda:2, DataParallel with device_ids {2, 3} — and yet
// nvidia-smi shows the process on GPU 0 too. DataParallel itself keeps off GPU 0; one
// ordinary line of the training loop does not: the batch is moved "to the GPU" with an
// index-less torch::kCUDA, which means the *current device*, and on the main thread that
// is still 0. Keep this process off every GPU that device_ids does not name.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <string>

#include <torch/torch.h>

#include "gpulab/cuda.h"
#include "gpulab/data_parallel.h"
#include "gpulab/lesson.h"

constexpr int kSteps = 3;

// The stretch (--hide-others): whatever runs later (a library's stray call, autograd's device
// threads, which before PyTorch 2.0 selected every GPU the process could see), only a GPU
// CUDA cannot see stays clean. So before the first CUDA call list device_ids' GPUs alone:
// they become cuda:0, cuda:1, ... in the same order.
std::vector<int> hide_others(const std::vector<int>& device_ids) {
  std::vector<std::string> entries;  // what CUDA_VISIBLE_DEVICES lists now; none: every GPU
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) {
    std::stringstream in(visible);
    for (std::string entry; std::getline(in, entry, ',');) entries.push_back(entry);
  }
  std::string list;
  std::vector<int> renumbered;
  for (int id : device_ids) {
    const std::string entry = entries.empty() ? std::to_string(id) : entries.at(static_cast<std::size_t>(id));
    list += (list.empty() ? "" : ",") + entry;
    renumbered.push_back(static_cast<int>(renumbered.size()));
  }
  setenv("CUDA_VISIBLE_DEVICES", list.c_str(), /*overwrite=*/1);
  return renumbered;
}

int main(int argc, char** argv) {
  return gpulab::run_lesson("10", argc, argv, [](gpulab::Lesson& lesson) {
    // The article's device_ids=[2, 3]; the checks try others (--device-ids 3,1).
    std::vector<int> device_ids = lesson.int_list("--device-ids", {2, 3});
    // Before manual_seed, which seeds every GPU's generator and so starts CUDA.
    const auto& args = lesson.args();
    if (std::find(args.begin(), args.end(), "--hide-others") != args.end()) device_ids = hide_others(device_ids);
    torch::manual_seed(0);

    // The current device is per thread and starts at 0: make it device_ids[0] before any
    // CUDA call that uses "the current device".
    gpulab::cuda::set_device(device_ids[0]);

    torch::nn::Linear model(/*in_features=*/1024, /*out_features=*/1024);
    model->to(torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(device_ids[0])));
    gpulab::DataParallel parallel(model, device_ids);
    torch::optim::SGD optimizer(parallel.parameters(), /*lr=*/0.01);

    for (int step = 0; step < kSteps; ++step) {
      const auto start = std::chrono::steady_clock::now();
      // The batch goes "to the GPU", as the LibTorch examples move their data; DataParallel
      // scatters it from there to device_ids.
      const auto batch = torch::randn({/*batch=*/64, 1024}).to(torch::kCUDA);
      optimizer.zero_grad();
      const auto output = parallel.forward(batch);
      output.pow(2).mean().backward();
      optimizer.step();
      torch::cuda::synchronize();  // wait for the GPU before reading the clock
      const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
      lesson.say("step " + std::to_string(step) + ": " + std::to_string(took.count()) + " ms");
    }
    lesson.fact("current_device", gpulab::cuda::current_device());
    lesson.observe("after training", gpulab::tensors_of(*model));
  });
}
