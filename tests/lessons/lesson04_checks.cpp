// Lesson 04: under CUDA_VISIBLE_DEVICES=2,3,4,5, cuda:1 is physical GPU 3 (claim A2.6).
// Whether GPU 2 (cuda:0) stays untouched depends on the profile: before PyTorch 2.1 on
// CUDA 12, every device guard's restore makes a context on cuda:0.
#include <map>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "expect.h"
#include "gpu_requirements.h"
#include "lesson_profile.h"
#include "lesson_run.h"

using namespace gpulab::test;

namespace {
// "1 GPU (physical GPU 3)", "2 GPUs (physical GPUs 2 and 3)", "no GPU".
std::string counted(const std::set<int>& physical) {
  if (physical.empty()) return gpus(physical);
  return std::to_string(physical.size()) + (physical.size() == 1 ? " GPU (" : " GPUs (") + gpus(physical) + ")";
}

// "416.0 MiB", with the bytes when two different amounts would read the same.
std::string amount(std::uint64_t bytes, std::uint64_t other) {
  return mib(bytes) + (bytes != other && mib(bytes) == mib(other) ? " (" + std::to_string(bytes) + " bytes)" : "");
}
}  // namespace

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
    require_that(used.count(gpu) == 1, "this process listed by nvidia-smi on " + gpus({gpu}) + " (after forward)",
                 "on " + gpus(listed_on(used)));
    // The node file gives the simulated context's size; a real one (250-600 MiB, by GPU,
    // driver and lazy loading) is only known to cost something.
    const std::uint64_t context = simulated() ? node().gpus[static_cast<std::size_t>(gpu)].context_bytes : 1;
    const std::uint64_t tensors = (1024 * 1024 + 1024 + 2 * 64 * 1024) * sizeof(float);
    const std::string parts =
        simulated() ? "a " + mib(context) + " CUDA context plus " + mib(tensors) + " of weight, bias, batch and output"
                    : "a CUDA context plus " + mib(tensors) + " of weight, bias, batch and output";
    expect_at_least("memory this process uses on " + gpus({gpu}) + " after forward (" + parts + ")", used.at(gpu),
                    context + tensors);
  }

  SECTION("the other GPUs stay untouched, except cuda:0 where a guard's restore creates a context") {
    const gpulab::Profile profile = profile_of(run);
    const std::string on_profile =
        "PyTorch " + profile.torch_version() + " on CUDA " + std::to_string(profile.cuda_runtime);
    // Each op on cuda:1 enters a device guard and restores cuda:0 when it leaves: with
    // cudaSetDevice before 2.1 (a context on CUDA 12), with MaybeSetDevice from 2.1 (none).
    const bool restore_makes_context = profile.set_device_creates_context() && profile.guard_restore_sets_device();
    const int first_listed = cuda_order().at(2);  // the list's entry 2: physical GPU 2
    std::set<int> expected{gpu};
    if (restore_makes_context) expected.insert(first_listed);
    const std::string why =
        " (" + on_profile + ": " +
        (restore_makes_context ? "each device guard's restore to cuda:0 creates a context on " + gpus({first_listed})
         : !profile.set_device_creates_context()
             ? "a device guard's restore to cuda:0 creates no context, cudaSetDevice only selects the device"
             : "a device guard's restore to cuda:0 uses MaybeSetDevice, which creates no context") +
        ")";
    const auto contexts = run.contexts("after forward");
    const std::set<int> with_context(contexts.begin(), contexts.end());
    expect_that(with_context == expected, "CUDA contexts on " + gpus(expected) + " after forward" + why,
                "on " + gpus(with_context));
    const auto used = run.usage("after forward");
    expect_that(used.size() == expected.size(),
                "this process listed by nvidia-smi on " + counted(expected) + " after forward" + why,
                "on " + counted(listed_on(used)));
    if (restore_makes_context && simulated()) {
      const std::uint64_t context = node().gpus[static_cast<std::size_t>(first_listed)].context_bytes;
      const bool present = used.count(first_listed) == 1;
      expect_that(present && used.at(first_listed) == context,
                  "memory on " + gpus({first_listed}) + " = " + mib(context) + ", the stray CUDA context alone" + why,
                  present ? amount(used.at(first_listed), context) : "no memory on it");
    }
  }
}
