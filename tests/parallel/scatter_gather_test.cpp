// Scatter splits with chunk() (fewer chunks than devices is possible) and zips tuples and
// vectors; gather concatenates on the output device, the CPU included.
#include <catch2/catch.hpp>

#include "gpulab/data_parallel.h"
#include "gpulab/warnings.h"
#include "parallel_support.h"

using namespace gpulab::test;
using gpulab::parallel::Gather;
using gpulab::parallel::Scatter;

TEST_CASE("scatter uses chunk(): 9 rows on 8 GPUs are 5 chunks of ceil(9/8) = 2 rows, on the first 5 GPUs",
          "[parallel][scatter]") {
  const std::vector<int> devices{0, 1, 2, 3, 4, 5, 6, 7};
  const auto input = torch::arange(9 * 3).view({9, 3}).to(torch::kFloat);
  const auto chunks = Scatter<torch::Tensor>::apply(input, devices, 0);
  REQUIRE(chunks.size() == 5);
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    CHECK(chunks[i].device() == cuda(devices[i]));
    CHECK(chunks[i].size(0) == (i < 4 ? 2 : 1));
  }
  CHECK(torch::equal(torch::cat({chunks[0].cpu(), chunks[1].cpu(), chunks[2].cpu(), chunks[3].cpu(), chunks[4].cpu()}),
                     input));

  SECTION("along another dim") {
    const auto columns = Scatter<torch::Tensor>::apply(input, {5, 6}, 1);
    REQUIRE(columns.size() == 2);
    CHECK(columns[0].sizes() == torch::IntArrayRef{9, 2});
    CHECK(columns[1].sizes() == torch::IntArrayRef{9, 1});
    CHECK(columns[1].device() == cuda(6));
  }
  SECTION("a chunk already on its device is not copied") {
    const auto on_gpu = input.to(cuda(2));
    const auto pieces = Scatter<torch::Tensor>::apply(on_gpu, {2, 3}, 0);
    CHECK(pieces[0].data_ptr() == on_gpu.data_ptr());
    CHECK(pieces[1].device() == cuda(3));
  }
}

TEST_CASE("vectors and tuples are scattered element by element and zipped to the shortest, other objects are shared",
          "[parallel][scatter]") {
  const std::vector<int> devices{1, 2, 3};
  const std::vector<torch::Tensor> pair{torch::ones({6, 2}), torch::ones({2, 2})};  // 3 chunks and 2 chunks
  const auto per_device = Scatter<std::vector<torch::Tensor>>::apply(pair, devices, 0);
  REQUIRE(per_device.size() == 2);
  CHECK(per_device[1][0].device() == cuda(2));
  CHECK(per_device[1][1].device() == cuda(2));

  const auto tuples = Scatter<std::tuple<torch::Tensor, double>>::apply({torch::ones({3, 1}), 0.5}, devices, 0);
  REQUIRE(tuples.size() == 3);
  CHECK(std::get<0>(tuples[2]).device() == cuda(3));
  CHECK(std::get<1>(tuples[2]) == 0.5);
}

TEST_CASE("gather concatenates on output_device, or on the CPU with -1", "[parallel][gather]") {
  const std::vector<torch::Tensor> outputs{torch::ones({2, 3}, cuda(4)), torch::zeros({1, 3}, cuda(5))};
  const auto on_gpu = Gather<torch::Tensor>::apply(outputs, 4, 0);
  CHECK(on_gpu.device() == cuda(4));
  CHECK(on_gpu.sizes() == torch::IntArrayRef{3, 3});
  CHECK(on_gpu.sum().item<float>() == 6.0f);
  CHECK(Gather<torch::Tensor>::apply(outputs, -1, 0).device() == torch::Device(torch::kCPU));

  SECTION("tuples element by element") {
    const std::vector<std::tuple<torch::Tensor, torch::Tensor>> pairs{{outputs[0], outputs[0]},
                                                                      {outputs[1], outputs[1]}};
    const auto gathered = Gather<std::tuple<torch::Tensor, torch::Tensor>>::apply(pairs, 5, 0);
    CHECK(std::get<1>(gathered).device() == cuda(5));
    CHECK(std::get<1>(gathered).size(0) == 3);
  }
  SECTION("scalars become a vector, with PyTorch's warning") {
    std::vector<std::string> warnings;
    auto previous = gpulab::set_warning_listener([&](const std::string& text) { warnings.push_back(text); });
    const auto losses = Gather<torch::Tensor>::apply({torch::tensor(1.0f).to(cuda(0)), torch::tensor(2.0f).to(cuda(1))}, 0, 0);
    gpulab::set_warning_listener(std::move(previous));
    CHECK(losses.sizes() == torch::IntArrayRef{2});
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0] ==
          "Was asked to gather along dimension 0, but all input tensors were scalars; will instead unsqueeze and return "
          "a vector.");
  }
  SECTION("CPU outputs are refused, as PyTorch's Gather does") {
    CHECK_THROWS_WITH(Gather<torch::Tensor>::apply({torch::ones({1})}, 0, 0),
                      Catch::Contains("Gather function not implemented for CPU tensors"));
  }
}
