// Lesson 05: set_device sets a per-thread default; an explicit index and a scoped guard
// override it; a new thread starts on device 0 (claims A2.3, A2.4, A2.5, A3.3). Whether
// set_device creates a context depends on the CUDA runtime of the profile the lesson ran
// under (its report says which).
#include <algorithm>
#include <set>

#include <catch2/catch.hpp>

#include "gpu_requirements.h"
#include "lesson_profile.h"
#include "lesson_run.h"

using namespace gpulab::test;

namespace {
// The lesson runs with every GPU visible and uses cuda:0 to cuda:3 (set_device(2), .cuda(1),
// a guard to 3; a new thread starts on 0).
constexpr int kGpusUsed = 4;

// The physical GPU of cuda:`index`. The default node's GPUs all share one compute
// capability, so CUDA's order is PCI order there: cuda:i is physical GPU i.
int physical_of_cuda(int index) {
  const auto order = cuda_order();
  REQUIRE(index < static_cast<int>(order.size()));
  return order[static_cast<std::size_t>(index)];
}
}  // namespace

TEST_CASE("after set_device(2), .cuda() lands on cuda:2 and .cuda(1) still on cuda:1", "[lesson05]") {
  GPULAB_REQUIRE_GPUS(kGpusUsed, Env{});
  const auto run = run_lesson("05");
  CHECK(run.fact("current_device_after_set_device") == 2);
  CHECK(run.device_of("cuda() and cuda(1)", "default") == "cuda:2");
  CHECK(run.physical_of("cuda() and cuda(1)", "default") == physical_of_cuda(2));
  CHECK(run.device_of("cuda() and cuda(1)", "explicit") == "cuda:1");
  CHECK(run.physical_of("cuda() and cuda(1)", "explicit") == physical_of_cuda(1));
}

TEST_CASE("set_device creates the device's context at once on CUDA 12, and none on CUDA 11", "[lesson05]") {
  GPULAB_REQUIRE_GPUS(kGpusUsed, Env{});
  const auto run = run_lesson("05");
  const gpulab::Profile profile = profile_of(run);
  INFO("profile: PyTorch " << profile.torch_version() << " on CUDA " << profile.cuda_runtime);
  const int gpu = physical_of_cuda(2);
  if (!profile.set_device_creates_context()) {
    INFO("CUDA 11's cudaSetDevice only selects the device: no context until the first tensor");
    CHECK(run.contexts("after set_device").empty());
    CHECK(run.usage("after set_device").empty());
    return;
  }
  CHECK(run.contexts("after set_device") == std::vector<int>{gpu});
  const auto used = run.usage("after set_device");
  REQUIRE(used.count(gpu) == 1);
  // Only a context: the node file's size on the simulated node; on real GPUs its size
  // (250-600 MiB, by GPU, driver and lazy loading) is not known in advance.
  if (simulated())
    CHECK(used.at(gpu) == node().gpus[static_cast<std::size_t>(gpu)].context_bytes);
  else
    CHECK(used.at(gpu) > 0);
}

TEST_CASE("a scoped device guard changes the default only inside its scope", "[lesson05]") {
  GPULAB_REQUIRE_GPUS(kGpusUsed, Env{});
  const auto run = run_lesson("05");
  CHECK(run.fact("current_device_in_guard") == 3);
  CHECK(run.device_of("inside the guard", "scoped") == "cuda:3");
  CHECK(run.fact("current_device_after_guard") == 2);
  CHECK(run.device_of("at the end", "after_guard") == "cuda:2");
}

TEST_CASE("a new thread starts on device 0; the worker computes on the main thread's GPU only after selecting it",
          "[lesson05]") {
  GPULAB_REQUIRE_GPUS(kGpusUsed, Env{});
  const auto run = run_lesson("05");
  CHECK(run.fact("current_device_in_new_thread") == 0);
  CHECK(run.device_of("at the end", "worker") == "cuda:2");
  CHECK(run.physical_of("at the end", "worker") == physical_of_cuda(2));
}

TEST_CASE("the process has contexts exactly on the GPUs its tensors used", "[lesson05]") {
  GPULAB_REQUIRE_GPUS(kGpusUsed, Env{});
  const auto run = run_lesson("05");
  std::set<int> used_by_tensors{run.physical_of("inside the guard", "scoped")};
  for (const char* tensor : {"default", "explicit", "after_guard", "worker"})
    used_by_tensors.insert(run.physical_of("at the end", tensor));
  const auto contexts = run.contexts("at the end");
  CHECK(std::set<int>(contexts.begin(), contexts.end()) == used_by_tensors);
  // The program never asks for device 0: a context there is the stray one of claim A3.2.
  CHECK(std::count(contexts.begin(), contexts.end(), physical_of_cuda(0)) == 0);
}
