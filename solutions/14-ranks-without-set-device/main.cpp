// Lesson 14 — Ranks that never call set_device: which GPUs do they use? (article claim A4.2)
//
// The article says `.cuda()` and `.cuda(local_rank)` both work under DDP. This program
// moves everything "to the GPU" with an index-less torch::kCUDA, as `.cuda()` does: the
// model, and this rank's shard of the data set, preloaded once (--shard-mib, 8 by default).
// Four ranks, four GPUs — now look at nvidia-smi.
#include <thread>

#include <torch/torch.h>

#include "gpulab/cuda.h"
#include "gpulab/distributed.h"
#include "gpulab/lesson.h"

constexpr int kSteps = 5;
constexpr int kFeatures = 256;  // one row of the shard is 1 KiB

int main(int argc, char** argv) {
  return gpulab::run_lesson("14", argc, argv, [](gpulab::Lesson& lesson) {
    const auto world = gpulab::distributed::World::from_environment();
    const int shard_mib = lesson.int_list("--shard-mib", {8}).at(0);
    lesson.fact("rank", world.rank);
    lesson.fact("local_rank", world.local_rank);
    gpulab::distributed::ProcessGroup group(world);

    // An index-less torch::kCUDA means this thread's current device, which starts at 0 in
    // every process: select this rank's GPU first (Python: torch.cuda.set_device(local_rank)).
    gpulab::cuda::set_device(world.local_rank);

    torch::manual_seed(0);
    torch::nn::Linear model(kFeatures, 1);
    model->to(torch::kCUDA);
    group.broadcast_parameters(*model);
    torch::optim::SGD optimizer(model->parameters(), /*lr=*/0.01);

    torch::manual_seed(1000 + world.rank);
    const std::int64_t rows = static_cast<std::int64_t>(shard_mib) * 1024;
    torch::Tensor shard;
    if (lesson.int_list("--loader-thread", {0}).at(0) == 1) {
      // As a data loader does: the shard is made on a worker thread of its own.
      std::thread loader([&] {
        gpulab::cuda::set_device(world.local_rank);  // the current device is per thread: 0 on a new one
        shard = torch::rand({rows, kFeatures}).to(torch::kCUDA);
      });
      loader.join();
    } else {
      shard = torch::rand({rows, kFeatures}).to(torch::kCUDA);
    }
    const auto labels = shard.sum(1, /*keepdim=*/true);
    lesson.observe("shard loaded", {{"shard", shard}, {"weight", model->weight}});

    for (int step = 0; step < kSteps; ++step) {
      const auto batch = shard.narrow(0, (step * 64) % (rows - 64), 64);
      const auto target = labels.narrow(0, (step * 64) % (rows - 64), 64);
      optimizer.zero_grad();
      torch::mse_loss(model->forward(batch), target).backward();
      group.all_reduce_gradients(*model);
      optimizer.step();
    }
    lesson.fact("parameters_hash", gpulab::distributed::parameters_hash(*model));
    lesson.fact("current_device", gpulab::cuda::current_device());  // where an index-less torch::kCUDA goes
    lesson.observe("after training", {{"shard", shard}, {"weight", model->weight}});
    group.barrier();
  });
}
