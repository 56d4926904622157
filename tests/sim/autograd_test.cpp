// Training on a simulated GPU computes what the same training computes on the CPU.
#include <catch2/catch.hpp>
#include <torch/torch.h>

#include "sim_support.h"

namespace {

torch::nn::Sequential make_model() {
  return torch::nn::Sequential(torch::nn::Linear(16, 32), torch::nn::ReLU(), torch::nn::Linear(32, 4));
}

// Copies `from`'s parameters into `to` (any device).
void copy_parameters(const torch::nn::Sequential& from, torch::nn::Sequential& to) {
  torch::NoGradGuard no_grad;
  const auto source = from->parameters();
  auto target = to->parameters();
  REQUIRE(source.size() == target.size());
  for (std::size_t i = 0; i < source.size(); ++i) target[i].copy_(source[i]);
}

struct Step {
  torch::Tensor loss;
  std::vector<torch::Tensor> gradients;
  std::vector<torch::Tensor> parameters;  // after the optimizer step
};

Step train_steps(torch::nn::Sequential& model, const torch::Tensor& inputs, const torch::Tensor& targets,
                 int steps) {
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9).weight_decay(1e-4));
  Step step;
  for (int i = 0; i < steps; ++i) {
    optimizer.zero_grad();
    step.loss = torch::mse_loss(model->forward(inputs), targets);
    step.loss.backward();
    step.gradients.clear();
    for (const auto& p : model->parameters()) step.gradients.push_back(p.grad().clone());
    optimizer.step();
  }
  for (const auto& p : model->parameters()) step.parameters.push_back(p.detach().clone());
  return step;
}

}  // namespace

TEST_CASE("SGD training steps on cuda give the losses, gradients and weights they give on the CPU",
          "[sim][autograd]") {
  torch::manual_seed(0);
  auto on_cpu = make_model();
  auto on_gpu = make_model();
  const torch::Device device("cuda:3");
  on_gpu->to(device);
  copy_parameters(on_cpu, on_gpu);
  const auto inputs = torch::randn({64, 16});
  const auto targets = torch::randn({64, 4});
  const auto initial = on_cpu->parameters()[0].detach().clone();

  const Step cpu = train_steps(on_cpu, inputs, targets, /*steps=*/3);
  const Step gpu = train_steps(on_gpu, inputs.to(device), targets.to(device), /*steps=*/3);

  CHECK(gpu.loss.device() == device);
  CHECK(gpu.loss.item<float>() == Approx(cpu.loss.item<float>()).epsilon(1e-5));
  REQUIRE(gpu.parameters.size() == cpu.parameters.size());
  for (std::size_t i = 0; i < cpu.parameters.size(); ++i) {
    INFO("parameter " << i);
    CHECK(gpu.gradients[i].device() == device);
    CHECK(gpu.parameters[i].device() == device);
    CHECK(torch::allclose(gpu.gradients[i].cpu(), cpu.gradients[i], /*rtol=*/1e-5, /*atol=*/1e-6));
    CHECK(torch::allclose(gpu.parameters[i].cpu(), cpu.parameters[i], /*rtol=*/1e-5, /*atol=*/1e-6));
  }
  // The steps changed the weights: equal results are not just untouched copies.
  CHECK_FALSE(torch::allclose(cpu.parameters[0], initial));
}

TEST_CASE("an MSE loss and its backward pass on cuda run without LibTorch warnings", "[sim][autograd]") {
  std::string err;
  const auto results = gpulab::test::probe({}, {"train:cuda:1"}, &err);
  INFO(results.dump(2) << "\nstderr:\n" << err);
  CHECK(results[0]["device"] == "cuda:1");
  CHECK(results[0]["grad_device"] == "cuda:1");
  CHECK(err.find("Warning") == std::string::npos);
}
