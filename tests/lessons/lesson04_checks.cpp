// Lesson 04: under CUDA_VISIBLE_DEVICES=2,3,4,5, cuda:1 is physical GPU 3 (claim A2.6).
#include <catch2/catch.hpp>

#include "lesson_run.h"

using namespace gpulab::test;

TEST_CASE("under CUDA_VISIBLE_DEVICES=2,3,4,5 the model and batch on cuda:1 land on physical GPU 3 only",
          "[lesson04]") {
  const auto run = run_lesson("04", {{"CUDA_VISIBLE_DEVICES", "2,3,4,5"}});
  CHECK(run.fact("device_count") == 4);

  for (const char* tensor : {"weight", "bias"}) CHECK(run.physical_of("after model.to(device)", tensor) == 3);
  for (const char* tensor : {"batch", "output"}) CHECK(run.physical_of("after forward", tensor) == 3);

  SECTION("this process uses memory on GPU 3 and nowhere else: a context plus the tensors") {
    const auto used = run.usage("after forward");
    REQUIRE(used.size() == 1);
    REQUIRE(used.count(3) == 1);
    const std::uint64_t context = node().gpus[3].context_bytes;
    const std::uint64_t tensors = (1024 * 1024 + 1024 + 2 * 64 * 1024) * sizeof(float);
    CHECK(used.at(3) >= context + tensors);
    CHECK(run.contexts("after forward") == std::vector<int>{3});
  }
}
