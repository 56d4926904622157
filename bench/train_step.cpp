// Benchmark: one training step of a small MLP on simulated cuda:0 versus on the CPU, in
// the same process. The simulated backend runs CPU kernels on host aliases of device
// memory, so the ratio measures its overhead (target: <= 1.10x).
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace {

constexpr int kBatch = 256;
constexpr int kWarmup = 5;
constexpr int kSteps = 40;
constexpr int kRounds = 5;  // alternate devices, keep each device's best round

struct Mlp : torch::nn::Module {
  Mlp()
      : fc1(register_module("fc1", torch::nn::Linear(512, 1024))),
        fc2(register_module("fc2", torch::nn::Linear(1024, 10))) {}
  torch::Tensor forward(const torch::Tensor& x) { return fc2(torch::relu(fc1(x))); }
  torch::nn::Linear fc1;
  torch::nn::Linear fc2;
};

double seconds_per_step(const torch::Device& device, int steps) {
  torch::manual_seed(0);
  auto model = std::make_shared<Mlp>();
  model->to(device);
  torch::optim::SGD optimizer(model->parameters(), /*lr=*/0.01);
  const auto x = torch::randn({kBatch, 512}, device);
  const auto y = torch::randint(0, 10, {kBatch}, torch::TensorOptions(device).dtype(torch::kLong));
  auto step = [&] {
    optimizer.zero_grad();
    auto loss = torch::nn::functional::cross_entropy(model->forward(x), y);
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
  if (!torch::cuda::is_available()) {
    std::puts("no CUDA device visible: nothing to compare");
    return 1;
  }
  std::vector<double> cpu, cuda;
  for (int round = 0; round < kRounds; ++round) {
    cpu.push_back(seconds_per_step(torch::kCPU, kSteps));
    cuda.push_back(seconds_per_step(torch::Device(torch::kCUDA, 0), kSteps));
  }
  const double best_cpu = *std::min_element(cpu.begin(), cpu.end());
  const double best_cuda = *std::min_element(cuda.begin(), cuda.end());
  std::printf("MLP 512-1024-10, batch %d, SGD step (best of %d rounds x %d steps)\n", kBatch, kRounds, kSteps);
  std::printf("  cpu     %.3f ms/step\n  cuda:0  %.3f ms/step\n  ratio   %.3fx (target <= 1.10x)\n", best_cpu * 1e3,
              best_cuda * 1e3, best_cuda / best_cpu);
  return 0;
}
