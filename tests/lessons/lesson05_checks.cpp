// Lesson 05: set_device sets a per-thread default; an explicit index and a scoped guard
// override it; a new thread starts on device 0 (claims A2.3, A2.4, A2.5, A3.3). Whether
// set_device creates a context depends on the CUDA runtime of the profile the lesson ran
// under (its report says which).
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "expect.h"
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
  if (index >= static_cast<int>(order.size()))
    FAIL("expected: CUDA numbers a cuda:" << index << " with every GPU visible — observed: it numbers only "
                                          << order.size() << " GPUs");
  return order[static_cast<std::size_t>(index)];
}

// The thread's current device a fact records: "cuda:2"; a fact that is no number as it reads.
std::string current(const nlohmann::json& index) {
  return index.is_number_integer() ? "cuda:" + std::to_string(index.get<int>()) : index.dump();
}

// torch::cuda's current device, as a fact recorded it, is cuda:`index`.
void expect_current_device(const LessonRun& run, const std::string& fact, int index, const std::string& when) {
  const auto& observed = run.fact(fact);
  expect_that(observed == index, "current device cuda:" + std::to_string(index) + " " + when,
              "current device " + current(observed));
}

// The named tensor's device string at an observation is `device`: "<what> on cuda:2<when>".
void expect_device(const LessonRun& run, const std::string& label, const std::string& tensor, const std::string& device,
                   const std::string& what, const std::string& when) {
  const std::string observed = run.device_of(label, tensor);
  expect_that(observed == device, what + " on " + device + when, "on " + observed);
}

// The named tensor is on the physical GPU behind cuda:`index`.
void expect_behind(const LessonRun& run, const std::string& label, const std::string& tensor, int index,
                   const std::string& what) {
  const int expected = physical_of_cuda(index);
  const int observed = run.physical_of(label, tensor);
  expect_that(observed == expected, what + " " + placement(expected) + " (cuda:" + std::to_string(index) + ")",
              placement(observed));
}

std::set<int> as_set(const std::vector<int>& physical) { return {physical.begin(), physical.end()}; }

// "416.0 MiB", with the bytes when two different amounts would read the same.
std::string amount(std::uint64_t bytes, std::uint64_t other) {
  return mib(bytes) + (bytes != other && mib(bytes) == mib(other) ? " (" + std::to_string(bytes) + " bytes)" : "");
}
}  // namespace

TEST_CASE("after set_device(2), .cuda() lands on cuda:2 and .cuda(1) still on cuda:1", "[lesson05]") {
  GPULAB_REQUIRE_GPUS(kGpusUsed, Env{});
  const auto run = run_lesson("05");
  expect_current_device(run, "current_device_after_set_device", 2, "after set_device(2)");
  expect_device(run, "cuda() and cuda(1)", "default", "cuda:2", "the tensor moved with .cuda()",
                " after set_device(2)");
  expect_behind(run, "cuda() and cuda(1)", "default", 2, "the tensor moved with .cuda()");
  expect_device(run, "cuda() and cuda(1)", "explicit", "cuda:1", "the tensor moved with .cuda(1)",
                " after set_device(2)");
  expect_behind(run, "cuda() and cuda(1)", "explicit", 1, "the tensor moved with .cuda(1)");
}

TEST_CASE("set_device creates the device's context at once on CUDA 12, and none on CUDA 11", "[lesson05]") {
  GPULAB_REQUIRE_GPUS(kGpusUsed, Env{});
  const auto run = run_lesson("05");
  const gpulab::Profile profile = profile_of(run);
  const std::string on_profile =
      "PyTorch " + profile.torch_version() + " on CUDA " + std::to_string(profile.cuda_runtime);
  const int gpu = physical_of_cuda(2);
  if (!profile.set_device_creates_context()) {
    const std::string why =
        " (" + on_profile + ": cudaSetDevice only selects the device, no context until the first tensor)";
    const auto contexts = run.contexts("after set_device");
    expect_that(contexts.empty(), "no CUDA context right after set_device(2)" + why,
                "CUDA contexts on " + gpus(as_set(contexts)));
    const auto used = run.usage("after set_device");
    expect_that(used.empty(), "this process listed by nvidia-smi on no GPU right after set_device(2)" + why,
                "on " + gpus(listed_on(used)));
    return;
  }
  const std::string why = " (" + on_profile + ": cudaSetDevice creates the device's context)";
  const auto contexts = run.contexts("after set_device");
  expect_that(contexts == std::vector<int>{gpu},
              "a CUDA context on " + gpus({gpu}) + " only, right after set_device(2)" + why,
              "CUDA contexts on " + gpus(as_set(contexts)));
  const auto used = run.usage("after set_device");
  require_that(used.count(gpu) == 1,
               "this process listed by nvidia-smi on " + gpus({gpu}) + " right after set_device(2)" + why,
               "on " + gpus(listed_on(used)));
  // Only a context: the node file's size on the simulated node; on real GPUs its size
  // (250-600 MiB, by GPU, driver and lazy loading) is not known in advance.
  if (simulated()) {
    const std::uint64_t context = node().gpus[static_cast<std::size_t>(gpu)].context_bytes;
    expect_that(
        used.at(gpu) == context,
        "memory on " + gpus({gpu}) + " = " + mib(context) + " right after set_device(2), its CUDA context alone" + why,
        amount(used.at(gpu), context));
  } else {
    expect_that(used.at(gpu) > 0,
                "memory used on " + gpus({gpu}) + " right after set_device(2), by its CUDA context" + why,
                mib(used.at(gpu)));
  }
}

TEST_CASE("a scoped device guard changes the default only inside its scope", "[lesson05]") {
  GPULAB_REQUIRE_GPUS(kGpusUsed, Env{});
  const auto run = run_lesson("05");
  expect_current_device(run, "current_device_in_guard", 3, "inside the guard to cuda:3");
  expect_device(run, "inside the guard", "scoped", "cuda:3", "the tensor moved with .cuda()", " inside the guard");
  expect_current_device(run, "current_device_after_guard", 2, "after the guard's scope (set_device(2) before it)");
  expect_device(run, "at the end", "after_guard", "cuda:2", "the tensor moved with .cuda()",
                " after the guard's scope");
}

TEST_CASE("a new thread starts on device 0, the worker computes on the main thread's GPU only after selecting it",
          "[lesson05]") {
  GPULAB_REQUIRE_GPUS(kGpusUsed, Env{});
  const auto run = run_lesson("05");
  expect_current_device(run, "current_device_in_new_thread", 0, "when the new thread starts");
  expect_device(run, "at the end", "worker", "cuda:2", "the worker thread's tensor", ", the main thread's device");
  expect_behind(run, "at the end", "worker", 2, "the worker thread's tensor");
}

TEST_CASE("the process has contexts exactly on the GPUs its tensors used", "[lesson05]") {
  GPULAB_REQUIRE_GPUS(kGpusUsed, Env{});
  const auto run = run_lesson("05");
  std::set<int> used_by_tensors{run.physical_of("inside the guard", "scoped")};
  for (const char* tensor : {"default", "explicit", "after_guard", "worker"})
    used_by_tensors.insert(run.physical_of("at the end", tensor));
  const auto contexts = run.contexts("at the end");
  expect_that(as_set(contexts) == used_by_tensors,
              "CUDA contexts at the end exactly where the tensors are: on " + gpus(used_by_tensors),
              "on " + gpus(as_set(contexts)));
  // The program never asks for device 0: a context there is the stray one of claim A3.2.
  const int first = physical_of_cuda(0);
  expect_that(std::count(contexts.begin(), contexts.end(), first) == 0,
              "no CUDA context on " + gpus({first}) + " (cuda:0): the program never selects device 0",
              "a CUDA context on it (contexts on " + gpus(as_set(contexts)) + ")");
}
