// DataParallel's device rules and messages: defaults, ids this process cannot see, the
// device_ids[0] placement check, one device.
#include <catch2/catch.hpp>

#include "gpulab/data_parallel.h"
#include "parallel_support.h"

using namespace gpulab::test;

TEST_CASE("device_ids defaults to every visible GPU and output_device to device_ids[0]", "[parallel][checks]") {
  const int visible = static_cast<int>(torch::cuda::device_count());
  REQUIRE(visible >= 4);
  Recorder model;
  model->to(cuda(0));
  gpulab::DataParallel all(model);
  std::vector<int> expected(static_cast<std::size_t>(visible));
  for (int i = 0; i < visible; ++i) expected[static_cast<std::size_t>(i)] = i;
  CHECK(all.device_ids() == expected);
  CHECK(all.output_device() == 0);

  gpulab::DataParallel two(model, {3, 1});
  CHECK(two.output_device() == 3);
  gpulab::DataParallel to_cpu(model, {3, 1}, -1);
  CHECK(to_cpu.output_device() == -1);

  const auto plan = gpulab::parallel::make_plan(std::nullopt, std::nullopt, 1);
  CHECK(plan.device_ids == expected);
  CHECK(plan.output_device == 0);
  CHECK(plan.dim == 1);
  CHECK(gpulab::parallel::make_plan(std::vector<torch::Device>{cuda(2)}, torch::Device(torch::kCPU), 0).output_device ==
        -1);
}

TEST_CASE("an id this process cannot see fails with a message that says which and why", "[parallel][checks]") {
  const int visible = static_cast<int>(torch::cuda::device_count());
  Recorder model;
  SECTION("in device_ids") {
    CHECK_THROWS_WITH(gpulab::DataParallel(model, {0, visible}),
                      Catch::Contains("Invalid device id " + std::to_string(visible) + " in device_ids") &&
                          Catch::Contains("sees " + std::to_string(visible) + " GPU(s)"));
    CHECK_THROWS_WITH(gpulab::DataParallel(model, {-1}), Catch::Contains("Invalid device id -1"));
  }
  SECTION("as output_device") {
    CHECK_THROWS_WITH(gpulab::DataParallel(model, {0}, visible), Catch::Contains("in output_device"));
  }
  SECTION("the functional form takes CUDA devices only") {
    CHECK_THROWS_WITH(gpulab::data_parallel(model, torch::ones({4, 8}), std::vector<torch::Device>{torch::kCPU}),
                      Catch::Contains("Expected a cuda device, but got: cpu"));
  }
}

TEST_CASE("forward refuses a module that is not on device_ids[0], with PyTorch's exact message", "[parallel][checks]") {
  Recorder model;
  model->to(cuda(0));
  const std::string expected =
      "module must have its parameters and buffers on device cuda:2 (device_ids[0]) but found one of them on device: "
      "cuda:0";
  CHECK(gpulab::parallel::placement_message(2, cuda(0)) == expected);
  const auto message_of = [](const std::function<void()>& step) -> std::string {
    try {
      step();
    } catch (const c10::Error& error) {
      return error.what_without_backtrace();
    }
    return "(no error)";
  };

  gpulab::DataParallel parallel(model, {2, 3});
  CHECK(message_of([&] { parallel.forward(torch::ones({4, 8})); }) == expected);
  CHECK(message_of([&] {
          gpulab::data_parallel(model, torch::ones({4, 8}), std::vector<torch::Device>{cuda(2), cuda(3)});
        }) == expected);
  CHECK(model->log->calls.empty());

  SECTION("a buffer counts too") {
    torch::nn::BatchNorm1d norm(8);
    norm->to(cuda(2));
    norm->named_buffers(/*recurse=*/false)["running_mean"].set_data(torch::zeros({8}, cuda(0)));
    CHECK(message_of([&] { gpulab::parallel::check_placement(*norm, 2); }) == expected);
  }
  SECTION("moved to cuda:2, it runs") {
    model->to(cuda(2));
    CHECK(parallel.forward(torch::ones({4, 8})).device() == cuda(2));
  }
}

TEST_CASE("with one device DataParallel moves the module there and calls it directly: no thread, no gather",
          "[parallel][checks]") {
  Recorder model;
  gpulab::DataParallel parallel(model, {3}, /*output_device=*/1);
  for (const auto& parameter : model->parameters()) CHECK(parameter.device() == cuda(3));
  const auto output = parallel.forward(torch::ones({6, 8}));
  CHECK(output.device() == cuda(3));  // not gathered to output_device
  REQUIRE(model->log->calls.size() == 1);
  CHECK(model->log->calls[0].thread == std::this_thread::get_id());
  CHECK(model->log->calls[0].rows == 6);
  CHECK(model->log->calls[0].input_device == cuda(3));  // the input is still scattered there
}

TEST_CASE("identical GPUs raise no imbalance warning", "[parallel][checks]") {
  CHECK_FALSE(gpulab::parallel::imbalance_warning({0, 1, 2, 3, 4, 5, 6, 7}).has_value());
  CHECK(gpulab::parallel::imbalance_message(3, 1) ==
        "\n    There is an imbalance between your GPUs. You may want to exclude GPU 3 which\n"
        "    has less than 75% of the memory or cores of GPU 1. You can do so by setting\n"
        "    the device_ids argument to DataParallel, or by setting the CUDA_VISIBLE_DEVICES\n"
        "    environment variable.");
}
