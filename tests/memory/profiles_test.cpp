// The software profile decides which calls create contexts (docs/reference.md "Contexts and memory"): plain LibTorch
// programs (programs/context_hold.cpp) observed from outside with `gpulab smi --json`, under
// the linked release's CUDA builds (GPULAB_CUDA_BUILD, one per CUDA major version) — PyPI's
// 2.15 by default, Debian's 1.13 in CI's second stage. Expectations come from the profile smi reports, through the
// rules' predicates, so each build checks its own version's rules. Also MIG: one instance
// visible, and instances that do not share memory.
#include <set>

#include <catch2/catch.hpp>

#include "child.h"
#include "memory_support.h"

using namespace gpulab::test;

namespace {

// CUDA index k is physical GPU 7-k: a context's GPU tells which CUDA index made it.
const Env kReversed = {{"CUDA_VISIBLE_DEVICES", "7,6,5,4,3,2,1,0"}, {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}};
int physical_of(int cuda_index) { return 7 - cuda_index; }

Env with_build(Env env, const std::string& build) {
  env.emplace_back("GPULAB_CUDA_BUILD", build);
  return env;
}

// A context-hold program that printed "devices N" and "ready", and smi's view of it.
struct Held {
  Held(const std::string& what, const std::string& device, const Env& env)
      : state(fresh_state_dir()), child({bin("context-hold"), what, device}, state, env) {
    const std::string first = child.read_line();
    INFO("context-hold " << what << " " << device << " printed '" << first << "'");
    REQUIRE(first.rfind("devices ", 0) == 0);
    devices = std::stoi(first.substr(8));
    REQUIRE(child.read_line() == "ready");
    view = smi(state, env);
  }
  // The physical GPUs where smi lists the program; each must hold just a context.
  std::set<int> contexts(const gpulab::Node& node) const {
    std::set<int> gpus;
    for (const int gpu : view.gpus_of(child.pid())) {
      INFO("GPU " << gpu);
      CHECK(view.usage(gpu, child.pid()) == node.gpus[static_cast<std::size_t>(gpu)].context_bytes);
      gpus.insert(gpu);
    }
    return gpus;
  }
  std::string state;
  Child child;
  int devices = 0;
  Smi view;
};

}  // namespace

TEST_CASE("a program that only enters a DeviceGuard for cuda:3 holds a context there on CUDA 12 and none on CUDA 11",
          "[memory][contexts][profile]") {
  for (const std::string& build : cuda_builds_to_try()) {
    DYNAMIC_SECTION("GPULAB_CUDA_BUILD=" << build) {
      const Held held("guard", "cuda:3", with_build(kReversed, build));
      const gpulab::Profile profile = held.view.profile();
      REQUIRE(profile.cuda.text() == build);
      INFO("profile: " << profile.name());
      // Entering the guard is cudaSetDevice(3) in every PyTorch version.
      const std::set<int> expected =
          profile.set_device_creates_context() ? std::set<int>{physical_of(3)} : std::set<int>{};
      CHECK(held.contexts(node()) == expected);
    }
  }
}

TEST_CASE("leaving a guard restores the previous device with cudaSetDevice before PyTorch 2.1, which on CUDA 12 "
          "makes a context on cuda:0 too",
          "[memory][contexts][profile]") {
  for (const std::string& build : cuda_builds_to_try()) {
    DYNAMIC_SECTION("GPULAB_CUDA_BUILD=" << build) {
      const Held held("guard-exit", "cuda:3", with_build(kReversed, build));
      const gpulab::Profile profile = held.view.profile();
      INFO("profile: " << profile.name());
      std::set<int> expected;
      if (profile.set_device_creates_context()) {
        expected.insert(physical_of(3));
        if (profile.guard_restore_sets_device()) expected.insert(physical_of(0));  // else MaybeSetDevice
      }
      CHECK(held.contexts(node()) == expected);
    }
  }
}

TEST_CASE("torch::randn({1}, cuda:1) on a fresh thread: contexts behind cuda:0 and cuda:1 before PyTorch 2.1 on "
          "CUDA 12 (PR 94864), behind cuda:1 only otherwise",
          "[memory][contexts][profile]") {
  for (const std::string& build : cuda_builds_to_try()) {
    DYNAMIC_SECTION("GPULAB_CUDA_BUILD=" << build) {
      const Held held("randn", "cuda:1", with_build(kReversed, build));
      const gpulab::Profile profile = held.view.profile();
      INFO("profile: " << profile.name());
      const bool stray_context = profile.set_device_creates_context() && profile.guard_restore_sets_device();
      std::set<int> expected{physical_of(1)};
      if (stray_context) expected.insert(physical_of(0));
      const auto gpus = held.view.gpus_of(held.child.pid());
      CHECK(std::set<int>(gpus.begin(), gpus.end()) == expected);
      if (stray_context) CHECK(held.view.usage(physical_of(0), held.child.pid()) == node().gpus[0].context_bytes);
    }
  }
}

TEST_CASE("by default a build models its release's PyPI wheel, and a CUDA build the release never shipped is refused",
          "[memory][profile]") {
  const Held held("guard", "cuda:0", {{"GPULAB_CUDA_BUILD", std::nullopt}});
  const gpulab::Profile profile = held.view.profile();
  INFO("profile: " << profile.name());
  const auto release = gpulab::shipped_release(profile.torch_major, profile.torch_minor);
  REQUIRE(release);
  CHECK(profile.cuda == release->pypi_default);

  // No PyTorch release shipped a CUDA 10.0 build beside 11.x and later ones.
  const auto refused = probe({"contexts"}, {{"GPULAB_CUDA_BUILD", "10.0"}});
  INFO("report: " << refused.report.dump());
  CHECK(refused.report.at("profile").value("error", "").find("never shipped a CUDA 10.0 build") != std::string::npos);
}

TEST_CASE("on mig-a100 with CUDA_VISIBLE_DEVICES unset, a program sees one device: GPU 0's first MIG instance",
          "[memory][mig]") {
  const Env mig = {{"GPULAB_NODE", "mig-a100"}};
  const gpulab::Node node_file = node("mig-a100");
  const Held held("randn", "cuda:0", mig);
  CHECK(held.devices == 1);
  CHECK(held.view.gpus_of(held.child.pid()) == std::vector<int>{0});
  bool listed = false;
  for (const auto& process : held.view.report.at("gpus").at(0).at("processes")) {
    if (process.at("pid") != held.child.pid()) continue;
    listed = true;
    CHECK(process.at("gpu_instance") == node_file.gpus[0].mig[0].gpu_instance);
    CHECK(process.at("compute_instance") == node_file.gpus[0].mig[0].compute_instance);
  }
  CHECK(listed);
}

TEST_CASE("processes on different MIG instances of one GPU do not compete for memory, on the same instance they do",
          "[memory][mig][oom]") {
  const Env mig_node = {{"GPULAB_NODE", "mig-a100"}};
  const gpulab::Gpu gpu = node("mig-a100").gpus[0];
  REQUIRE(gpu.mig.size() >= 2);
  const gpulab::MigInstance& slice = gpu.mig[0];
  // Three quarters of what two contexts leave of a slice: two holders do not fit in one
  // slice, while a second context still does.
  const std::uint64_t held = (slice.capacity_bytes - 2 * gpu.context_bytes) / 4 * 3 / (2 * kMiB) * (2 * kMiB);
  const std::uint64_t holder_uses = gpu.context_bytes + segment_bytes(held);
  REQUIRE(holder_uses + gpu.context_bytes <= slice.capacity_bytes);
  REQUIRE(2 * holder_uses > slice.capacity_bytes);
  const std::string state = fresh_state_dir();
  const auto on = [&](const gpulab::MigInstance& instance) {
    Env env = mig_node;
    env.emplace_back("CUDA_VISIBLE_DEVICES", instance.uuid);
    return env;
  };
  const std::string mib = std::to_string(held / kMiB);

  Child first({bin("memory-hold"), "cuda:0", mib}, state, on(gpu.mig[0]));
  REQUIRE(first.read_line() == "ready");
  Child second({bin("memory-hold"), "cuda:0", mib}, state, on(gpu.mig[1]));
  REQUIRE(second.read_line() == "ready");
  const auto view = smi(state, mig_node);
  CHECK(view.usage(0, first.pid()) == holder_uses);
  CHECK(view.usage(0, second.pid()) == holder_uses);
  CHECK(view.used(0) == 2 * holder_uses);

  Child third({bin("memory-hold"), "cuda:0", mib}, state, on(gpu.mig[0]));
  const std::string line = third.read_line();
  CHECK(third.wait().exit_code == 3);
  const std::string prefix = "out of memory: ";
  REQUIRE(line.rfind(prefix, 0) == 0);
  // Only the first instance's processes count and are listed: the first holder and the third.
  const std::uint64_t free = slice.capacity_bytes - holder_uses - gpu.context_bytes;
  const auto expected = [&](bool holder_first) {
    std::vector<ProcessInUse> listed{{first.pid(), holder_uses}, {0, gpu.context_bytes}};
    if (!holder_first) std::swap(listed[0], listed[1]);
    return oom_message(view.profile(), segment_bytes(held), 0, slice.capacity_bytes, free, listed, 0, 0);
  };
  const std::string message = line.substr(prefix.size());
  INFO("message: " << message << "\nexpected: " << expected(true));
  CHECK((message == expected(true) || message == expected(false)));
}
