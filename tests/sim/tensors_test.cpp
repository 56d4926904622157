// Tensors on the simulated GPUs behave like CUDA tensors: views alias device memory,
// copies cross devices and convert dtypes, scalars read back. In-process tests: the
// default node (all GPUs visible; its GPUs are identical, so cuda:i is physical GPU i).
#include <catch2/catch.hpp>
#include <torch/torch.h>

#include "gpulab/cuda.h"
#include "gpulab/observe.h"
#include "sim_support.h"

using namespace gpulab::test;

namespace {

// The default node's GPUs share one compute capability, so CUDA's order is PCI order.
void require_identical_default_gpus() {
  const auto gpus = node().gpus;
  REQUIRE(gpus.size() >= 8);
  for (const auto& gpu : gpus) {
    REQUIRE(gpu.cc_major == gpus[0].cc_major);
    REQUIRE(gpu.cc_minor == gpus[0].cc_minor);
  }
}

bool within(const torch::Tensor& view, const torch::Tensor& base) {
  const auto* begin = static_cast<const char*>(base.storage().data());
  const auto* at = static_cast<const char*>(view.data_ptr());
  return view.storage().is_alias_of(base.storage()) && at >= begin &&
         at < begin + static_cast<std::ptrdiff_t>(base.storage().nbytes());
}

}  // namespace

TEST_CASE("writes through view, slice, transpose, narrow and select land in the cuda tensor's memory",
          "[sim][views]") {
  // The same writes on a CPU tensor give the expected values.
  const auto write_through_views = [](torch::Tensor t) {
    t.view({24}).slice(/*dim=*/0, /*start=*/0, /*end=*/6).fill_(-1);
    t.transpose(0, 1).select(0, 2).mul_(10);
    t.narrow(/*dim=*/1, /*start=*/3, /*length=*/2).add_(100);
    t.select(0, 3).slice(0, 0, 6, /*step=*/2).zero_();
    return t;
  };
  const auto host = torch::arange(24, torch::kFloat32).view({4, 6});
  auto device = host.to(cuda(1));
  const auto allocated = gpulab::cuda::memory_allocated(1);

  write_through_views(device);

  CHECK(gpulab::cuda::memory_allocated(1) == allocated);  // views took no device memory
  CHECK(device.device() == cuda(1));
  CHECK(torch::equal(device.cpu(), write_through_views(host.clone())));
  for (const auto& view : {device.view({24}), device.transpose(0, 1), device.narrow(1, 3, 2), device.select(0, 3),
                           device.slice(1, 1, 5), device.unsqueeze(0).expand({2, 4, 6})}) {
    CHECK(view.device() == cuda(1));
    CHECK(within(view, device));
  }
}

TEST_CASE("an expanded view of a cuda tensor reads the tensor's current values", "[sim][views]") {
  auto row = torch::zeros({6}, cuda(2));
  const auto expanded = row.expand({4, 6});
  row.fill_(3);
  CHECK(expanded.device() == cuda(2));
  CHECK(within(expanded, row));
  CHECK(expanded.sum().item<float>() == 4 * 6 * 3.0f);
  CHECK(torch::equal(expanded.cpu(), torch::full({4, 6}, 3.0f)));
}

TEST_CASE("copies move values between the host and any GPU, converting dtypes on the way", "[sim][copies]") {
  require_identical_default_gpus();
  const auto host = torch::linspace(-4.75, 4.75, /*steps=*/1000, torch::kFloat64);

  SECTION("host to cuda:2 as float32") {
    const auto before = gpulab::cuda::memory_allocated(2);
    const auto on2 = host.to(cuda(2), torch::kFloat32);
    CHECK(on2.device() == cuda(2));
    CHECK(on2.scalar_type() == torch::kFloat32);
    CHECK(gpulab::physical_index_of(on2) == 2);
    CHECK(gpulab::cuda::memory_allocated(2) - before == block_bytes(host.numel() * sizeof(float)));
    CHECK(torch::equal(on2.cpu(), host.to(torch::kFloat32)));
  }
  SECTION("cuda:2 to cuda:5 as int32, then back to the host as float64") {
    const auto on2 = host.to(cuda(2));
    const auto before = gpulab::cuda::memory_allocated(5);
    const auto on5 = on2.to(cuda(5), torch::kInt32);
    CHECK(on5.device() == cuda(5));
    CHECK(on5.scalar_type() == torch::kInt32);
    CHECK(gpulab::physical_index_of(on5) == 5);
    CHECK(gpulab::cuda::memory_allocated(5) - before == block_bytes(host.numel() * sizeof(std::int32_t)));
    const auto back = on5.to(torch::kCPU, torch::kFloat64);
    CHECK(back.is_cpu());
    CHECK(torch::equal(back, host.to(torch::kInt32).to(torch::kFloat64)));
  }
  SECTION("copy_ into a tensor on another GPU writes that tensor's memory") {
    const auto source = host.to(cuda(1), torch::kFloat16);
    auto target = torch::zeros({host.numel()}, torch::TensorOptions().device(cuda(3)).dtype(torch::kFloat64));
    const void* memory = target.data_ptr();
    target.copy_(source);
    CHECK(target.data_ptr() == memory);
    CHECK(target.device() == cuda(3));
    CHECK(torch::equal(target.cpu(), host.to(torch::kFloat16).to(torch::kFloat64)));
  }
  SECTION("a non-contiguous cuda view copies to another GPU and to the host by value") {
    const auto matrix = host.view({25, 40}).to(cuda(4));
    const auto columns = matrix.t().slice(0, 5, 15);
    const auto on6 = columns.to(cuda(6));
    CHECK(on6.device() == cuda(6));
    CHECK(torch::equal(on6.cpu(), host.view({25, 40}).t().slice(0, 5, 15)));
  }
}

TEST_CASE("to(kCPU, non_blocking=true) returns the tensor's values on the host", "[sim][copies]") {
  const auto host = torch::randn({64, 3});
  const auto device = host.to(cuda(3), /*non_blocking=*/true);
  CHECK(device.device() == cuda(3));
  const auto back = device.to(torch::kCPU, /*non_blocking=*/true);
  CHECK(back.is_cpu());
  CHECK(torch::equal(back, host));
}

TEST_CASE("item() reads a scalar back from a tensor on any GPU", "[sim][copies]") {
  const auto values = torch::tensor({3, 1, 4, 1, 5, 9, 2, 6}, torch::kInt64);
  const auto device = values.to(cuda(6));
  CHECK(device.sum().item<std::int64_t>() == values.sum().item<std::int64_t>());
  CHECK(device.max().item<std::int64_t>() == 9);
  CHECK(device[4].item<std::int64_t>() == values[4].item<std::int64_t>());
  CHECK(device.to(torch::kFloat64).mean().item<double>() == Approx(values.to(torch::kFloat64).mean().item<double>()));
  CHECK(device.gt(8).any().item<bool>());
  CHECK_FALSE(device.gt(9).any().item<bool>());
}
