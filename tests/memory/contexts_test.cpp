// Contexts: which calls give a process a CUDA context on a physical GPU (docs/reference.md "Contexts and memory"),
// under both CUDA runtimes and the build's PyTorch (docs/reference.md, "Profiles"). A
// context appears the first time a process allocates on a device or runs work there; on
// CUDA 12 also when cudaSetDevice selects it — through set_device or entering a device
// guard — and, before PyTorch 2.1, when a guard's end restores the previous device. The
// current device belongs to each thread and starts at 0.
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

std::set<int> plus(std::set<int> gpus, const std::set<int>& more) {
  gpus.insert(more.begin(), more.end());
  return gpus;
}

Env under(const std::string& build) {
  Env env = kReversedEnv;
  env.emplace_back("GPULAB_CUDA_BUILD", build);
  return env;
}

}  // namespace

TEST_CASE("a context appears on first allocation or work, on CUDA 12 also from set_device and a DeviceGuard, and "
          "before PyTorch 2.1 from a guard's restore",
          "[memory][contexts]") {
  for (const std::string& build : cuda_builds_to_try()) {
    DYNAMIC_SECTION("GPULAB_CUDA_BUILD=" << build) {
      const auto run = probe({"contexts"}, under(build));
      const gpulab::Profile profile = profile_of(run.report);
      REQUIRE(profile.cuda.text() == build);
      INFO("profile: " << profile.name());
      const bool selecting_creates = profile.set_device_creates_context();
      const bool restore_creates = selecting_creates && profile.guard_restore_sets_device();
      const auto gpus = node().gpus;
      REQUIRE(run.fact("device_count") == static_cast<int>(kReversed.size()));

      {
        INFO("initialising CUDA (device_count) creates no context");
        CHECK(run.usage("after device_count").empty());
      }

      {
        INFO("a DeviceGuard makes cuda:1 current: on CUDA 12 its cudaSetDevice creates the context");
        CHECK(run.fact("current_device_in_guard") == 1);
        CHECK(contexts(run, "inside a DeviceGuard for cuda:1") == (selecting_creates ? physical({1}) : physical({})));
        CHECK(run.fact("current_device_after_guard") == 0);
      }

      // What the guard left: its device, and cuda:0 when its end restored with cudaSetDevice.
      const std::set<int> after_guard = plus(selecting_creates ? physical({1}) : physical({}),
                                             restore_creates ? physical({0}) : physical({}));
      {
        INFO("set_device(2) creates the context at once on CUDA 12 only, with no tensor there");
        CHECK(run.fact("current_device_after_set_device") == 2);
        CHECK(contexts(run, "after set_device(2)") == plus(after_guard, selecting_creates ? physical({2}) : physical({})));
        const int set_gpu = kReversed[2];
        if (selecting_creates)
          CHECK(run.usage("after set_device(2)").at(set_gpu) == gpus[static_cast<std::size_t>(set_gpu)].context_bytes);
        else
          CHECK(run.usage("after set_device(2)").count(set_gpu) == 0);
      }

      const std::set<int> after_set_device = plus(after_guard, selecting_creates ? physical({2}) : physical({}));
      {
        INFO("work on cuda:3 (synchronize) creates its context");
        CHECK(contexts(run, "after synchronize(3)") == plus(after_set_device, physical({3})));
      }

      {
        INFO("a tensor on cuda:4 creates its context, and the tensor's segment joins it");
        CHECK(contexts(run, "after a tensor on cuda:4") == plus(after_set_device, physical({3, 4})));
        const int tensor_gpu = kReversed[4];
        CHECK(run.physical_of("after a tensor on cuda:4", "small") == tensor_gpu);
        CHECK(run.usage("after a tensor on cuda:4").at(tensor_gpu) ==
              gpus[static_cast<std::size_t>(tensor_gpu)].context_bytes + segment_bytes(16 * sizeof(float)));
      }
    }
  }
}

TEST_CASE("the current device belongs to each thread and starts at 0, so an unguarded call on a new thread "
          "creates a context on device 0",
          "[memory][contexts]") {
  for (const std::string& build : cuda_builds_to_try()) {
    DYNAMIC_SECTION("GPULAB_CUDA_BUILD=" << build) {
      const auto run = probe({"threads"}, under(build));
      const bool selecting_creates = profile_of(run.report).set_device_creates_context();
      const std::set<int> main_thread = selecting_creates ? physical({1}) : physical({});
      CHECK(contexts(run, "main thread on cuda:1") == main_thread);

      {
        INFO("a new thread starts on device 0 although the main thread chose cuda:1");
        CHECK(run.fact("new_thread_current_device") == 0);
        CHECK(run.fact("main_thread_current_device") == 1);
        CHECK(contexts(run, "after an unguarded synchronize on a new thread") == plus(main_thread, physical({0})));
      }

      {
        INFO("a thread's DeviceGuard decides where a tensor without a device index goes");
        CHECK(run.device_of("after a guarded thread made a tensor", "made") == "cuda:2");
        CHECK(run.physical_of("after a guarded thread made a tensor", "made") == kReversed[2]);
        CHECK(contexts(run, "after a guarded thread made a tensor") == plus(main_thread, physical({0, 2})));
      }

      {
        INFO("a thread that only switched to cuda:3 left a context there on CUDA 12 only");
        CHECK(contexts(run, "after a thread only switched to cuda:3") ==
              plus(main_thread, selecting_creates ? physical({0, 2, 3}) : physical({0, 2})));
      }
    }
  }
}

// Two "maybe exchange" calls of 2.15, read from its binaries: at::accelerator::maybeExchangeDevice
// (libtorch_cpu.so) is the guard's uncheckedSetDevice — MaybeSetDevice — and then returns
// getDevice(), the device after it; c10::cuda::MaybeExchangeDevice (libc10_cuda.so, the CUDA
// hooks') returns cudaGetDevice's device, switches only to a device with a context, records
// one without, and leaves a recorded device recorded when asked for the runtime's own.
TEST_CASE("the two maybeExchangeDevice calls of 2.15: neither creates a context; they differ in what they return "
          "and in what they record",
          "[memory][contexts]") {
  const auto run = probe({"steps", "alloc:a:0:1", "accelerator_maybe_exchange:3:a1", "observe:after a1",
                          "accelerator_maybe_exchange:0:a2", "hooks_maybe_exchange:3:h1", "observe:after h1",
                          "hooks_maybe_exchange:0:h2", "observe:after h2"},
                         kReversedEnv);
  const gpulab::Profile profile = profile_of(run.report);
  INFO("profile: " << profile.name());
  if (!run.errors("a1").empty()) {
    WARN("maybeExchangeDevice is not in this LibTorch (" << profile.torch_version() << ")");
    return;
  }
  REQUIRE_FALSE(profile.guard_restore_sets_device());  // 2.15: a CUDA 13 build
  // at::accelerator: cuda:3 has no context, so MaybeSetDevice only records it; getDevice says 3.
  CHECK(run.fact("a1.returned") == 3);
  CHECK(run.fact("a1.current") == 3);
  CHECK(contexts(run, "after a1") == physical({0}));
  CHECK(run.fact("a2.returned") == 0);  // cuda:0 has its context: SetDevice(0) clears the record
  CHECK(run.fact("a2.current") == 0);
  // The hooks': cudaGetDevice says 0; 3 is recorded, no context.
  CHECK(run.fact("h1.returned") == 0);
  CHECK(run.fact("h1.current") == 3);
  CHECK(contexts(run, "after h1") == physical({0}));
  // The runtime is still on 0: asked for 0 it returns at once, and 3 stays recorded.
  CHECK(run.fact("h2.returned") == 0);
  CHECK(run.fact("h2.current") == 3);
  CHECK(contexts(run, "after h2") == physical({0}));
}
