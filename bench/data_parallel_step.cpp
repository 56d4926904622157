// Benchmark: one DataParallel training step over 2 simulated GPUs versus the same step on
// one GPU, same batch, same process. Each step starts from a batch on the CPU, as a data
// loader gives it. DataParallel adds a scatter, a replica per extra GPU, one thread per
// replica and a gather; the ratio measures what that costs (target: <= 1.25x).
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "gpulab/data_parallel.h"

namespace {

constexpr int kBatch = 256;
constexpr int kWarmup = 5;
constexpr int kSteps = 40;
constexpr int kRounds = 5;  // alternate the two, keep each one's best round

struct MlpImpl : torch::nn::Cloneable<MlpImpl> {
  MlpImpl() { reset(); }
  void reset() override {
    fc1 = register_module("fc1", torch::nn::Linear(512, 1024));
    fc2 = register_module("fc2", torch::nn::Linear(1024, 10));
  }
  torch::Tensor forward(const torch::Tensor& x) { return fc2(torch::relu(fc1(x))); }
  torch::nn::Linear fc1{nullptr};
  torch::nn::Linear fc2{nullptr};
};
TORCH_MODULE(Mlp);

// Seconds per step; `device_ids` empty: the plain model on cuda:0.
double seconds_per_step(const std::vector<int>& device_ids, int steps) {
  torch::manual_seed(0);
  Mlp model;
  model->to(torch::Device(torch::kCUDA, 0));
  gpulab::DataParallel parallel(model, device_ids.empty() ? std::vector<int>{0} : device_ids);
  torch::optim::SGD optimizer(model->parameters(), /*lr=*/0.01);
  const auto x = torch::randn({kBatch, 512});
  const auto y = torch::randint(0, 10, {kBatch}, torch::kLong);
  auto step = [&] {
    optimizer.zero_grad();
    const auto output = device_ids.empty() ? model->forward(x.to(torch::Device(torch::kCUDA, 0))) : parallel.forward(x);
    auto loss = torch::nn::functional::cross_entropy(output, y.to(output.device()));
    loss.backward();
    optimizer.step();
    return loss.item<float>();  // synchronises, as a real training loop's logging would
  };
  for (int i = 0; i < kWarmup; ++i) step();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) step();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / steps;
}

}  // namespace

int main() {
  if (torch::cuda::device_count() < 2) {
    std::puts("fewer than 2 CUDA devices visible: nothing to compare");
    return 1;
  }
  std::vector<double> single, parallel;
  for (int round = 0; round < kRounds; ++round) {
    single.push_back(seconds_per_step({}, kSteps));
    parallel.push_back(seconds_per_step({0, 1}, kSteps));
  }
  const double best_single = *std::min_element(single.begin(), single.end());
  const double best_parallel = *std::min_element(parallel.begin(), parallel.end());
  std::printf("MLP 512-1024-10, batch %d from the CPU, SGD step (best of %d rounds x %d steps)\n", kBatch, kRounds,
              kSteps);
  std::printf("  cuda:0                     %.3f ms/step\n  DataParallel cuda:0,cuda:1 %.3f ms/step\n"
              "  ratio                      %.3fx (target <= 1.25x)\n",
              best_single * 1e3, best_parallel * 1e3, best_parallel / best_single);
  return 0;
}
