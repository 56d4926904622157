// Lesson 04: under CUDA_VISIBLE_DEVICES=2,3,4,5, cuda:1 is physical GPU 3 (claim A2.6).
#include <catch2/catch.hpp>

#include "expect.h"
#include "gpu_requirements.h"
#include "lesson_run.h"

using namespace gpulab::test;

TEST_CASE("under CUDA_VISIBLE_DEVICES=2,3,4,5 the model and batch on cuda:1 land on physical GPU 3 only",
          "[lesson04]") {
  const Env env = {{"CUDA_VISIBLE_DEVICES", "2,3,4,5"}};
  GPULAB_REQUIRE_GPUS(gpus_needed(env), env);
  const auto run = run_lesson("04", env);
  expect_equal("torch::cuda::device_count()", run.fact("device_count"), 4);

  const int gpu = cuda_order().at(3);  // the list's entry 3: physical GPU 3 where the GPUs are alike
  for (const char* tensor : {"weight", "bias"}) expect_on_gpu(run, "after model.to(device)", tensor, gpu);
  for (const char* tensor : {"batch", "output"}) expect_on_gpu(run, "after forward", tensor, gpu);

  SECTION("this process uses memory on GPU 3 and nowhere else: a context plus the tensors") {
    const auto used = run.usage("after forward");
    REQUIRE(used.size() == 1);
    REQUIRE(used.count(gpu) == 1);
    // The node file gives the simulated context's size; a real one (250-600 MiB, by GPU,
    // driver and lazy loading) is only known to cost something.
    const std::uint64_t context = simulated() ? node().gpus[static_cast<std::size_t>(gpu)].context_bytes : 1;
    const std::uint64_t tensors = (1024 * 1024 + 1024 + 2 * 64 * 1024) * sizeof(float);
    CHECK(used.at(gpu) >= context + tensors);
    CHECK(run.contexts("after forward") == std::vector<int>{gpu});
  }
}
