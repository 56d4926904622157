// Gradients reach the original parameters: training over two GPUs follows training on one.
#include <catch2/catch.hpp>

#include "gpulab/data_parallel.h"
#include "parallel_support.h"

using namespace gpulab::test;

namespace {

torch::nn::Sequential make_model() {
  return torch::nn::Sequential(torch::nn::Linear(16, 32), torch::nn::Tanh(), torch::nn::Linear(32, 4));
}

struct Training {
  std::vector<float> losses;
  std::vector<torch::Tensor> parameters;
};

// `steps` SGD steps on the same batch; `forward` runs the model (directly or in parallel).
template <typename Forward>
Training train(torch::nn::Sequential& model, const Forward& forward, const torch::Tensor& inputs,
               const torch::Tensor& targets, int steps) {
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
  Training result;
  for (int i = 0; i < steps; ++i) {
    optimizer.zero_grad();
    const auto output = forward(inputs);
    const auto loss = torch::mse_loss(output, targets.to(output.device()));
    loss.backward();
    optimizer.step();
    result.losses.push_back(loss.template item<float>());
  }
  for (const auto& p : model->parameters()) result.parameters.push_back(p.detach().cpu());
  return result;
}

}  // namespace

TEST_CASE("training with DataParallel on 2 GPUs matches training on 1 GPU, and the loss falls", "[parallel][training]") {
  torch::manual_seed(0);
  const auto inputs = torch::randn({64, 16});
  const auto targets = inputs.matmul(0.3 * torch::randn({16, 4}));  // a linear teacher: learnable
  auto single = make_model();
  auto parallel_model = make_model();
  {
    const torch::NoGradGuard no_grad;
    const auto from = single->parameters();
    auto to = parallel_model->parameters();
    for (std::size_t i = 0; i < from.size(); ++i) to[i].copy_(from[i]);
  }
  single->to(cuda(2));
  parallel_model->to(cuda(2));
  gpulab::DataParallel parallel(parallel_model, {2, 3});

  constexpr int kSteps = 20;
  const auto one = train(single, [&](const torch::Tensor& x) { return single->forward(x.to(cuda(2))); }, inputs,
                         targets, kSteps);
  const auto two = train(parallel_model, [&](const torch::Tensor& x) { return parallel.forward(x); }, inputs, targets,
                         kSteps);

  CHECK(two.losses.back() < 0.5f * two.losses.front());
  for (int i = 0; i < kSteps; ++i) CHECK(two.losses[static_cast<std::size_t>(i)] == Approx(one.losses[static_cast<std::size_t>(i)]).epsilon(1e-4));
  REQUIRE(one.parameters.size() == two.parameters.size());
  for (std::size_t i = 0; i < one.parameters.size(); ++i)
    CHECK(torch::allclose(one.parameters[i], two.parameters[i], /*rtol=*/1e-4, /*atol=*/1e-5));
  for (const auto& p : parallel_model->parameters()) CHECK(p.device() == cuda(2));
}
