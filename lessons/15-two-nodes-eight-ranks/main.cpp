// Lesson 15 — Two nodes, eight ranks: which number picks the GPU, which the data? (article claim A4.1)
//
// `gpulab launch --nnodes 2 --nproc-per-node 4` runs eight processes on two nodes (two
// simulated machines on this host, node0 and node1; on a cluster, two real ones). RANK
// numbers the processes of the whole job, LOCAL_RANK those of one node. The job's data comes
// in WORLD_SIZE shards, and one checkpoint is written for the whole job.
#include <cstdio>
#include <filesystem>
#include <string>

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

// Where the job's checkpoint goes: one file per job (its rendezvous port), in the temporary folder.
std::string checkpoint_path(const gpulab::distributed::World& world) {
  return (std::filesystem::temp_directory_path() / ("gpulab-lesson15-" + std::to_string(world.master_port) + ".pt")).string();
}

int main(int argc, char** argv) {
  return gpulab::run_lesson("15", argc, argv, [](gpulab::Lesson& lesson) {
    const auto world = gpulab::distributed::World::from_environment();
    lesson.fact("rank", world.rank);
    lesson.fact("local_rank", world.local_rank);
    lesson.fact("node_rank", world.node_rank);
    gpulab::distributed::ProcessGroup group(world);

    // Each rank's GPU: cuda:LOCAL_RANK of its own node (lesson 13).
    gpulab::cuda::set_device(world.local_rank);
    const torch::Device device(torch::kCUDA, static_cast<c10::DeviceIndex>(world.local_rank));
    // STRETCH: each rank also reports, as the fact "pci_bus_id", the PCI address of the GPU it
    //          trains on as nvidia-smi prints it ("00000000:07:00.0"): with the host, it finds the GPU.

    // TODO: the job's data comes in WORLD_SIZE shards, and its checkpoint must be written
    //       once. Every rank must train on a shard no other rank trains on, so that the job
    //       sees all of its data, and exactly one process of the whole job must write the
    //       checkpoint (below), on any number of nodes.
    const int shard = world.local_rank;
    lesson.fact("shard", shard);

    torch::manual_seed(world.rank);  // each rank starts different; the broadcast aligns them
    torch::nn::Linear model(/*in_features=*/16, /*out_features=*/1);
    model->to(device);
    group.broadcast_parameters(*model);  // everyone starts from rank 0's weights
    torch::optim::SGD optimizer(model->parameters(), /*lr=*/0.1);

    // This rank's shard of a synthetic regression: y = x · w_true.
    torch::manual_seed(1000 + shard);
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
    lesson.observe("the rank's data", {{"x", x}});  // the checks tell the shards apart by their values

    // The job's checkpoint (see the TODO above).
    const bool writes_checkpoint = world.local_rank == 0;
    if (writes_checkpoint) torch::save(model, checkpoint_path(world));
    lesson.fact("writes_checkpoint", writes_checkpoint ? 1 : 0);
    group.barrier();  // every rank has observed before any of them exits
    if (writes_checkpoint) std::filesystem::remove(checkpoint_path(world));  // a lesson leaves nothing behind
  });
}
