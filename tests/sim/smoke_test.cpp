#include <catch2/catch.hpp>
#include <torch/torch.h>
TEST_CASE("smoke") {
  auto t = torch::ones({2, 3}).to(torch::Device("cuda:1"));
  CHECK(t.device().index() == 1);
  auto u = (t * 2).sum();
  CHECK(u.item<float>() == 12.0f);
}
