// Lesson 10 — DataParallel on GPUs 2 and 3: which GPUs does the process touch? (article claim A3.2)
//
// The article's setup: the model on cuda:2, DataParallel with device_ids {2, 3}. Which GPUs
// does nvidia-smi show the process on? Keep this process off every GPU that device_ids does
// not name.
#include <chrono>

#include <torch/torch.h>

#include "gpulab/cuda.h"
#include "gpulab/data_parallel.h"
#include "gpulab/lesson.h"

constexpr int kSteps = 3;

int main(int argc, char** argv) {
  return gpulab::run_lesson("10", argc, argv, [](gpulab::Lesson& lesson) {
    torch::manual_seed(0);
    // The article's device_ids=[2, 3]; the checks try others (--device-ids 3,1).
    const std::vector<int> device_ids = lesson.int_list("--device-ids", {2, 3});

    // TODO: nvidia-smi must show this process only on the GPUs device_ids names (physical
    //       GPUs 2 and 3 here), with a CUDA context on no other GPU. Keep the training loop
    //       as it is: moving a batch with torch::kCUDA is what real code does.
    // STRETCH: run with --hide-others: hide every GPU outside device_ids before CUDA starts, so
    //          that nothing later (a library's stray call, autograd's device threads) can reach
    //          them and give them a context.

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
