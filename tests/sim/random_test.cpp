// Random numbers on the simulated GPUs: torch::manual_seed makes them reproducible, and,
// as on CUDA, each device draws from its own generator, independent of CPU draws.
#include <catch2/catch.hpp>
#include <torch/torch.h>

#include "sim_support.h"

using gpulab::test::cuda;

namespace {

std::vector<torch::Tensor> draws(int device) {
  const auto options = torch::TensorOptions().device(cuda(device));
  return {torch::randn({32}, options), torch::rand({32}, options), torch::randint(0, 1000, {32}, options),
          torch::randperm(32, options.dtype(torch::kInt64)),
          torch::empty({32}, options).uniform_(-2, 2), torch::empty({32}, options).normal_(5, 0.5),
          torch::bernoulli(torch::full({32}, 0.5, options)),
          torch::dropout(torch::ones({32}, options), /*p=*/0.5, /*train=*/true)};
}

bool same(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  REQUIRE(a.size() == b.size());
  bool all = true;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (torch::equal(a[i].cpu(), b[i].cpu())) continue;
    UNSCOPED_INFO("draw " << i << " differs");
    all = false;
  }
  return all;
}

}  // namespace

TEST_CASE("torch::manual_seed makes random numbers on a GPU reproducible", "[sim][random]") {
  torch::manual_seed(1234);
  const auto first = draws(3);
  torch::manual_seed(1234);
  const auto second = draws(3);
  CHECK(same(first, second));
  torch::manual_seed(4321);
  CHECK_FALSE(same(first, draws(3)));
}

TEST_CASE("random ops on a GPU produce tensors there, with values of the requested distribution",
          "[sim][random]") {
  torch::manual_seed(7);
  const auto options = torch::TensorOptions().device(cuda(2));
  for (const auto& tensor : draws(2)) CHECK(tensor.device() == cuda(2));

  const auto uniform = torch::rand({4096}, options);
  CHECK(uniform.min().item<float>() >= 0.0f);
  CHECK(uniform.max().item<float>() < 1.0f);
  const auto integers = torch::randint(3, 9, {4096}, options);
  CHECK(integers.min().item<std::int64_t>() >= 3);
  CHECK(integers.max().item<std::int64_t>() < 9);
  const auto permutation = torch::randperm(100, options.dtype(torch::kInt64));
  CHECK(torch::equal(std::get<0>(permutation.sort()).cpu(), torch::arange(100, torch::kInt64)));
  const auto normal = torch::randn({1 << 16}, options);
  CHECK(normal.mean().item<float>() == Approx(0.0).margin(0.05));
  CHECK(normal.std().item<float>() == Approx(1.0).margin(0.05));
}

TEST_CASE("each GPU draws from its own generator: CPU draws and other GPUs' draws do not shift it",
          "[sim][random]") {
  torch::manual_seed(99);
  const auto alone = draws(1);

  torch::manual_seed(99);
  (void)torch::randn({1000});    // the CPU generator moves on
  (void)draws(4);                // and so does cuda:4's
  const auto interleaved = draws(1);

  CHECK(same(alone, interleaved));
}

TEST_CASE("dropout in training on a GPU zeroes elements and scales the rest, and backpropagates through its mask",
          "[sim][random]") {
  torch::manual_seed(5);
  const double p = 0.25;
  const auto x = torch::ones({4000}, torch::TensorOptions().device(cuda(5)).requires_grad(true));
  const auto y = torch::dropout(x, p, /*train=*/true);
  y.sum().backward();

  CHECK(y.device() == cuda(5));
  const auto kept = y.ne(0);
  CHECK(torch::allclose(y.masked_select(kept).cpu(), torch::full({kept.sum().item<std::int64_t>()}, 1 / (1 - p))));
  CHECK(kept.to(torch::kFloat).mean().item<float>() == Approx(1 - p).margin(0.03));
  // y = x * mask / (1 - p) and x is all ones, so dy/dx is y itself.
  CHECK(x.grad().device() == cuda(5));
  CHECK(torch::equal(x.grad().cpu(), y.detach().cpu()));
}
