// Contexts: which calls give a process a CUDA context on a physical GPU (BEHAVIOUR.md §3).
// A context appears the first time a process allocates on a device, runs work there or
// makes it current with set_device; a DeviceGuard switch alone creates none. The current
// device belongs to each thread and starts at 0.
#include <algorithm>
#include <set>

#include <catch2/catch.hpp>

#include "memory_support.h"

using namespace gpulab::test;

namespace {

// CUDA index k is physical GPU kReversed[k]: indices and physical GPUs differ everywhere.
const std::vector<int> kReversed = {7, 6, 5, 4, 3, 2, 1, 0};
const Env kReversedEnv = {{"CUDA_VISIBLE_DEVICES", "7,6,5,4,3,2,1,0"}, {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}};

std::set<int> physical(std::initializer_list<int> cuda_indices) {
  std::set<int> gpus;
  for (const int index : cuda_indices) gpus.insert(kReversed.at(static_cast<std::size_t>(index)));
  return gpus;
}

std::set<int> contexts(const LessonRun& run, const std::string& label) {
  const auto gpus = run.contexts(label);
  return {gpus.begin(), gpus.end()};
}

}  // namespace

TEST_CASE("a context appears on first allocation, work or set_device, and never from a DeviceGuard alone",
          "[memory][contexts]") {
  const auto run = probe({"contexts"}, kReversedEnv);
  const auto gpus = node().gpus;
  REQUIRE(run.fact("device_count") == static_cast<int>(kReversed.size()));

  {
    INFO("initialising CUDA (device_count) creates no context");
    CHECK(run.usage("after device_count").empty());
  }

  {
    INFO("a DeviceGuard makes cuda:1 current without creating its context");
    CHECK(run.fact("current_device_in_guard") == 1);
    CHECK(run.usage("inside a DeviceGuard for cuda:1").empty());
    CHECK(run.fact("current_device_after_guard") == 0);
  }

  {
    INFO("set_device(2) creates the context at once (CUDA 12), with no tensor there");
    CHECK(run.fact("current_device_after_set_device") == 2);
    CHECK(contexts(run, "after set_device(2)") == physical({2}));
    const int set_gpu = kReversed[2];
    CHECK(run.usage("after set_device(2)").at(set_gpu) == gpus[static_cast<std::size_t>(set_gpu)].context_bytes);
  }

  {
    INFO("work on cuda:3 (synchronize) creates its context");
    CHECK(contexts(run, "after synchronize(3)") == physical({2, 3}));
  }

  {
    INFO("a tensor on cuda:4 creates its context, and the tensor's segment joins it");
    CHECK(contexts(run, "after a tensor on cuda:4") == physical({2, 3, 4}));
    const int tensor_gpu = kReversed[4];
    CHECK(run.physical_of("after a tensor on cuda:4", "small") == tensor_gpu);
    CHECK(run.usage("after a tensor on cuda:4").at(tensor_gpu) ==
          gpus[static_cast<std::size_t>(tensor_gpu)].context_bytes + segment_bytes(16 * sizeof(float)));
  }
}

TEST_CASE("the current device belongs to each thread and starts at 0, so an unguarded call on a new thread "
          "creates a context on device 0",
          "[memory][contexts]") {
  const auto run = probe({"threads"}, kReversedEnv);
  CHECK(contexts(run, "main thread on cuda:1") == physical({1}));

  {
    INFO("a new thread starts on device 0 although the main thread chose cuda:1");
    CHECK(run.fact("new_thread_current_device") == 0);
    CHECK(run.fact("main_thread_current_device") == 1);
    CHECK(contexts(run, "after an unguarded synchronize on a new thread") == physical({0, 1}));
  }

  {
    INFO("a thread's DeviceGuard decides where a tensor without a device index goes");
    CHECK(run.device_of("after a guarded thread made a tensor", "made") == "cuda:2");
    CHECK(run.physical_of("after a guarded thread made a tensor", "made") == kReversed[2]);
    CHECK(contexts(run, "after a guarded thread made a tensor") == physical({0, 1, 2}));
  }

  {
    INFO("a thread that only switched to cuda:3 left no context there");
    CHECK(contexts(run, "after a thread only switched to cuda:3") == physical({0, 1, 2}));
  }
}
