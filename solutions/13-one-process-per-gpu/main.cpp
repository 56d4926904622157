// Lesson 13 — One process per GPU: which GPU does each rank get? (article claims A4.1, A4.3)
//
// `gpulab launch --nproc-per-node 4` (or torchrun) starts four copies of this program and
// tells each one who it is through the environment: RANK, LOCAL_RANK, WORLD_SIZE, ... Every
// copy trains the same model on its own shard of the data; after each backward() the
// gradients are averaged over the copies, so all of them take the same step — what
// Python's DistributedDataParallel does for you. The job: one process per GPU.
#include <cstdio>

#include <torch/torch.h>

#include "gpulab/cuda.h"
#include "gpulab/distributed.h"
#include "gpulab/lesson.h"

constexpr int kSteps = 20;

std::string decimal(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6f", value);
  return text;
}

int main(int argc, char** argv) {
  return gpulab::run_lesson("13", argc, argv, [](gpulab::Lesson& lesson) {
    const auto world = gpulab::distributed::World::from_environment();
    lesson.fact("rank", world.rank);
    lesson.fact("local_rank", world.local_rank);
    gpulab::distributed::ProcessGroup group(world);

    // LOCAL_RANK is this process's index among the processes of this node, and CUDA numbers
    // the GPUs it can see from 0: with CUDA_VISIBLE_DEVICES=4,5,6,7, cuda:r is physical GPU 4 + r.
    // Selecting it first (the article's set_device(args.local_rank)) keeps every index-less
    // call on it too.
    gpulab::cuda::set_device(world.local_rank);
    const torch::Device device(torch::kCUDA, static_cast<c10::DeviceIndex>(world.local_rank));
    // The stretch: the UUID names the physical GPU whatever CUDA_VISIBLE_DEVICES renumbered.
    lesson.fact("gpu_uuid", gpulab::cuda::get_device_properties(world.local_rank).uuid);

    torch::manual_seed(world.rank);  // each rank starts different; the broadcast aligns them
    torch::nn::Linear model(/*in_features=*/16, /*out_features=*/1);
    model->to(device);
    group.broadcast_parameters(*model);  // everyone starts from rank 0's weights
    torch::optim::SGD optimizer(model->parameters(), /*lr=*/0.1);

    // This rank's shard of a synthetic regression: y = x · w_true.
    torch::manual_seed(1000 + world.rank);
    const auto w_true = torch::linspace(-1, 1, 16).unsqueeze(1);
    const auto x = torch::randn({256, 16});
    const auto inputs = x.to(device);
    const auto targets = x.matmul(w_true).to(device);

    double first_loss = 0, last_loss = 0;
    for (int step = 0; step < kSteps; ++step) {
      optimizer.zero_grad();
      const auto loss = torch::mse_loss(model->forward(inputs), targets);
      loss.backward();
      group.all_reduce_gradients(*model);  // average the gradients over all ranks
      optimizer.step();
      (step == 0 ? first_loss : last_loss) = loss.item<double>();
    }
    lesson.say("rank " + std::to_string(world.rank) + ": loss " + decimal(first_loss) + " -> " + decimal(last_loss));
    lesson.fact("loss_first", decimal(first_loss));
    lesson.fact("loss_last", decimal(last_loss));
    lesson.fact("parameters_hash", gpulab::distributed::parameters_hash(*model));
    lesson.observe("after training", gpulab::tensors_of(*model));
    group.barrier();  // every rank has observed before any of them exits
  });
}
