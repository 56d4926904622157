// Lesson 04: under CUDA_VISIBLE_DEVICES=2,3,4,5, cuda:1 is physical GPU 3 (claim A2.6).
// Whether GPU 2 (cuda:0) stays untouched depends on the profile: before PyTorch 2.1 on
// CUDA 12, every device guard's restore makes a context on cuda:0.
#include <set>

#include <catch2/catch.hpp>

#include "expect.h"
#include "gpu_requirements.h"
#include "lesson_profile.h"
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

  SECTION("this process's tensors use GPU 3: a context plus the tensors") {
    const auto used = run.usage("after forward");
    REQUIRE(used.count(gpu) == 1);
    // The node file gives the simulated context's size; a real one (250-600 MiB, by GPU,
    // driver and lazy loading) is only known to cost something.
    const std::uint64_t context = simulated() ? node().gpus[static_cast<std::size_t>(gpu)].context_bytes : 1;
    const std::uint64_t tensors = (1024 * 1024 + 1024 + 2 * 64 * 1024) * sizeof(float);
    CHECK(used.at(gpu) >= context + tensors);
  }

  SECTION("the other GPUs stay untouched, except cuda:0 where a guard's restore creates a context") {
    const gpulab::Profile profile = profile_of(run);
    INFO("profile: PyTorch " << profile.torch_version() << " on CUDA " << profile.cuda_runtime);
    // Each op on cuda:1 enters a device guard and restores cuda:0 when it leaves: with
    // cudaSetDevice before 2.1 (a context on CUDA 12), with MaybeSetDevice from 2.1 (none).
    const bool restore_makes_context = profile.set_device_creates_context() && profile.guard_restore_sets_device();
    const int first_listed = cuda_order().at(2);  // the list's entry 2: physical GPU 2
    std::set<int> expected{gpu};
    if (restore_makes_context) expected.insert(first_listed);
    const auto contexts = run.contexts("after forward");
    CHECK(std::set<int>(contexts.begin(), contexts.end()) == expected);
    const auto used = run.usage("after forward");
    CHECK(used.size() == expected.size());
    if (restore_makes_context && simulated())
      CHECK(used.at(first_listed) == node().gpus[static_cast<std::size_t>(first_listed)].context_bytes);
  }
}
