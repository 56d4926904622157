// Lesson 15 — Two nodes, eight ranks: which GPU does each rank take? (article claim A4.1)
//
// `gpulab launch --nnodes 2 --nproc-per-node 4` runs eight processes on two nodes (two
// simulated machines on this host, node0 and node1; on a cluster, two real ones) and tells
// each one its RANK and its LOCAL_RANK.
#include <cstdio>

#include <torch/torch.h>

#include "gpulab/distributed.h"
#include "gpulab/lesson.h"

constexpr int kSteps = 20;

std::string decimal(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6f", value);
  return text;
}

int main(int argc, char** argv) {
  return gpulab::run_lesson("15", argc, argv, [](gpulab::Lesson& lesson) {
    const auto world = gpulab::distributed::World::from_environment();
    lesson.fact("rank", world.rank);
    lesson.fact("local_rank", world.local_rank);
    lesson.fact("node_rank", world.node_rank);
    gpulab::distributed::ProcessGroup group(world);

    // TODO: each rank must train on its own GPU of its own node — on every node, the first
    //       process on cuda:0, the second on cuda:1, ... — and use no other GPU. Eight ranks,
    //       eight GPUs in all.
    const torch::Device device(torch::kCUDA, static_cast<c10::DeviceIndex>(world.rank));
    // STRETCH: each rank also reports, as the fact "pci_bus_id", the PCI address of the GPU it
    //          trains on as nvidia-smi prints it ("00000000:07:00.0"): with the host, it finds the GPU.

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
