// Lesson 04: which GPU is cuda:1? CUDA indices count the visible GPUs in list order, so
// under CUDA_VISIBLE_DEVICES=2,3,4,5 cuda:1 is physical GPU 3 (claim A2.6). The program is
// given nvidia-smi's number (--gpu N) and must put the model and batch there under any list
// that names it. Whether the GPU behind cuda:0 stays untouched depends on the profile:
// before PyTorch 2.1 on CUDA 12, every device guard's restore makes a context on cuda:0.
#include <map>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "expect.h"
#include "generated.h"
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

// `visible[i]`: the physical GPU behind cuda:i in this scenario; `gpu`: nvidia-smi's number
// the program is given (--gpu).
void check_on_gpu(const Env& env, const std::vector<int>& visible, int gpu) {
  std::string list;
  for (const int v : visible) list += (list.empty() ? "" : ",") + std::to_string(v);
  INFO("scenario: " << shown(env) << "lesson-04 --gpu " << gpu
                    << "\nthe GPUs this process sees, as nvidia-smi numbers them, cuda:0 first: " << list);
  const auto run = run_scenario("04", env, {"--gpu", std::to_string(gpu)});
  require_no_errors(run, "the program trains");
  expect_equal("torch::cuda::device_count()", run.fact("device_count"), visible.size());

  for (const char* tensor : {"weight", "bias"}) expect_on_gpu(run, "after model.to(device)", tensor, gpu);
  for (const char* tensor : {"batch", "output"}) expect_on_gpu(run, "after forward", tensor, gpu);

  const auto used = run.usage("after forward");
  {
    INFO("this process's tensors use GPU " << gpu << ": a context plus the tensors");
    require_that(used.count(gpu) == 1, "this process listed by nvidia-smi on " + gpus({gpu}) + " (after forward)",
                 "on " + gpus(listed_on(used)));
    // The node file gives the simulated context's size; a real one (about 250-430 MiB with
    // lazy module loading, by GPU and driver: docs/reference.md) is only known to cost something.
    const bool sim = simulated(env);
    const std::uint64_t context =
        sim ? node(gpu_inventory(env).node).gpus[static_cast<std::size_t>(gpu)].context_bytes : 1;
    const std::uint64_t tensors = (1024 * 1024 + 1024 + 2 * 64 * 1024) * sizeof(float);
    const std::string parts =
        sim ? "a " + mib(context) + " CUDA context plus " + mib(tensors) + " of weight, bias, batch and output"
            : "a CUDA context plus " + mib(tensors) + " of weight, bias, batch and output";
    expect_at_least("memory this process uses on " + gpus({gpu}) + " after forward (" + parts + ")", used.at(gpu),
                    context + tensors);
  }

  // The other GPUs stay untouched, except cuda:0 where a guard's restore creates a context.
  const gpulab::Profile profile = profile_of(run);
  const std::string on_profile = profile.name();
  // Each op on cuda:k (k != 0) enters a device guard and restores cuda:0 when it leaves:
  // with cudaSetDevice before 2.1 (a context on CUDA 12), with MaybeSetDevice from 2.1 (none).
  const bool restore_makes_context = profile.set_device_creates_context() && profile.guard_restore_sets_device();
  const int first_visible = visible.front();
  std::set<int> expected{gpu};
  if (restore_makes_context) expected.insert(first_visible);
  const std::string why =
      " (" + on_profile + ": " +
      (first_visible == gpu ? std::string("the GPU is cuda:0 itself")
       : restore_makes_context
           ? "each device guard's restore to cuda:0 creates a context on " + gpus({first_visible})
       : !profile.set_device_creates_context()
           ? "a device guard's restore to cuda:0 creates no context, cudaSetDevice only selects the device"
           : "a device guard's restore to cuda:0 uses MaybeSetDevice, which creates no context") +
      ")";
  const auto contexts = run.contexts("after forward");
  const std::set<int> with_context(contexts.begin(), contexts.end());
  expect_that(with_context == expected, "CUDA contexts on " + gpus(expected) + " after forward" + why,
              "on " + gpus(with_context));
  expect_that(used.size() == expected.size(),
              "this process listed by nvidia-smi on " + counted(expected) + " after forward" + why,
              "on " + counted(listed_on(used)));
  if (restore_makes_context && first_visible != gpu && simulated(env)) {
    const std::uint64_t context =
        node(gpu_inventory(env).node).gpus[static_cast<std::size_t>(first_visible)].context_bytes;
    const bool present = used.count(first_visible) == 1;
    expect_that(present && used.at(first_visible) == context,
                "memory on " + gpus({first_visible}) + " = " + mib(context) + ", the stray CUDA context alone" + why,
                present ? amount(used.at(first_visible), context) : "no memory on it");
  }
}

void check_list(const std::string& list, const std::vector<int>& entries, int gpu) {
  const Env env = {{"CUDA_VISIBLE_DEVICES", list}};
  GPULAB_REQUIRE_GPUS(gpus_needed(env), env);
  check_on_gpu(env, physical_of_entries(entries), gpu);
}
}  // namespace

TEST_CASE("the article's case: under CUDA_VISIBLE_DEVICES=2,3,4,5 the work lands on physical GPU 3 only",
          "[lesson04]") {
  check_list("2,3,4,5", {2, 3, 4, 5}, 3);
}

TEST_CASE("nvidia-smi's GPU N under other lists that name it", "[lesson04]") {
  SECTION("CUDA_VISIBLE_DEVICES=2,3,4,5, GPU 5") { check_list("2,3,4,5", {2, 3, 4, 5}, 5); }
  SECTION("CUDA_VISIBLE_DEVICES=6,4, GPU 4") { check_list("6,4", {6, 4}, 4); }
  SECTION("CUDA_VISIBLE_DEVICES=7,0,3, GPU 3") { check_list("7,0,3", {7, 0, 3}, 3); }
  SECTION("CUDA_VISIBLE_DEVICES=1, GPU 1") { check_list("1", {1}, 1); }
  SECTION("nothing set, GPU 4") {
    GPULAB_REQUIRE_GPUS(5, Env{});
    check_on_gpu({}, cuda_order(), 4);
  }
  SECTION("a leading zero: CUDA_VISIBLE_DEVICES=02,3, GPU 2 (the entry is the number 2)") {
    check_list("02,3", {2, 3}, 2);
  }
  SECTION("two GPUs on each PCI bus: GPULAB_NODE=aws-p4d, nothing set, GPU 1") {
    GPULAB_REQUIRE_SIMULATED_NODE("this scenario needs the simulated node aws-p4d");
    const Env env = {{"GPULAB_NODE", "aws-p4d"}};
    check_on_gpu(env, cuda_order(env), 1);
  }
  SECTION("another node: GPULAB_NODE=tiny2 CUDA_VISIBLE_DEVICES=1,0, GPU 0") {
    const Env env = {{"GPULAB_NODE", "tiny2"}, {"CUDA_VISIBLE_DEVICES", "1,0"}};
    GPULAB_REQUIRE_GPUS(gpus_needed(env), env);
    if (simulated()) check_on_gpu(env, physical_of_entries({1, 0}, env), 0);
  }
}

TEST_CASE("a GPU the list does not name: the program refuses, and nothing lands on another GPU", "[lesson04]") {
  const Env env = {{"CUDA_VISIBLE_DEVICES", "2,3"}};
  GPULAB_REQUIRE_GPUS(gpus_needed(env) + 2, env);
  INFO("scenario: " << shown(env) << "lesson-04 --gpu 5\nnvidia-smi's GPU 5 is not among the GPUs this process sees (2 and 3)");
  const auto run = run_scenario("04", env, {"--gpu", "5"});
  expect_that(!run.errors("uncaught").empty(), "the program stops with an error (GPU 5 is not visible)", "no error");
  std::set<int> used;
  for (const auto& o : run.report.at("observations"))
    for (const auto& gpu : o.at("gpus"))
      if (gpu.value("used_bytes", std::uint64_t{0}) > 0) used.insert(gpu.at("physical_index").get<int>());
  expect_that(used.empty(), "no memory of this process on any GPU", "memory on " + gpus(used));
}

TEST_CASE("stretch: lists of UUIDs name the GPU too", "[lesson04][stretch]") {
  const Env needs = {{"CUDA_VISIBLE_DEVICES", "5"}};
  GPULAB_REQUIRE_GPUS(gpus_needed(needs), needs);
  const auto uuids = gpu_uuids();
  SECTION("CUDA_VISIBLE_DEVICES=<GPU 5's UUID>,<GPU 3's UUID>, GPU 3") {
    check_on_gpu({{"CUDA_VISIBLE_DEVICES", uuids.at(5) + "," + uuids.at(3)}}, {5, 3}, 3);
  }
  SECTION("unique UUID prefixes of GPUs 4, 0 and 2, GPU 2") {
    check_on_gpu({{"CUDA_VISIBLE_DEVICES",
                   uuids.at(4).substr(0, 12) + "," + uuids.at(0).substr(0, 12) + "," + uuids.at(2).substr(0, 12)}},
                 {4, 0, 2}, 2);
  }
}

TEST_CASE("stretch: where CUDA does not count in nvidia-smi's order", "[lesson04][stretch]") {
  GPULAB_REQUIRE_SIMULATED_NODE("these scenarios need the simulated nodes (GPULAB_NODE)");
  SECTION("workstation-mixed, nothing set, GPU 0 (the GTX 1080 Ti is cuda:1)") {
    const Env env = {{"GPULAB_NODE", "workstation-mixed"}};
    check_on_gpu(env, cuda_order(env), 0);
  }
  SECTION("pascal-rig, CUDA_VISIBLE_DEVICES=3,0,1, GPU 1") {
    const Env env = {{"GPULAB_NODE", "pascal-rig"}, {"CUDA_VISIBLE_DEVICES", "3,0,1"}};
    check_on_gpu(env, physical_of_entries({3, 0, 1}, env), 1);
  }
}

// Generated: lists of plain numbers (repeated, "02", past the last GPU, negative) and a GPU
// that is listed, or not, then (stretch) UUIDs, their prefixes and nodes of unlike GPUs;
// where the model and batch land, or that the program refuses, as the reference solution.
namespace {
Family lesson04_family(const std::vector<std::string>& nodes, const ListKinds& kinds, const std::string& what) {
  Family family;
  family.lesson = "04";
  family.what = what;
  family.facts = {"device_count"};
  family.draw = [nodes, kinds](Rng& rng) {
    const std::string name = draw_one(rng, nodes);
    Drawn drawn;
    drawn.env = {{"GPULAB_NODE", name}};
    const std::string list = draw_visible_list(rng, name, kinds);
    drawn.env.emplace_back("CUDA_VISIBLE_DEVICES", list);
    // Mostly a GPU the process sees; now and then one it does not.
    const auto visible = visible_after(name, list);
    const int gpu = !visible.empty() && draw_int(rng, 0, 4) != 0
                        ? visible.at(static_cast<std::size_t>(draw_int(rng, 0, static_cast<int>(visible.size()) - 1)))
                        : draw_int(rng, 0, static_cast<int>(node(name).gpus.size()) - 1);
    drawn.args = {"--gpu", std::to_string(gpu)};
    return drawn;
  };
  return family;
}
}  // namespace

TEST_CASE("generated scenarios: lists of plain numbers, repeated, with leading zeros or past the last GPU", "[lesson04]") {
  check_against_reference(lesson04_family({"dgx-a100", "tiny2", "aws-p4d"}, ListKinds{}, "lists of plain numbers"));
}

TEST_CASE("stretch: generated scenarios with UUIDs, prefixes and nodes of unlike GPUs", "[lesson04][stretch]") {
  ListKinds kinds;
  kinds.uuids = true;
  check_against_reference(
      lesson04_family({"dgx-a100", "workstation-mixed", "pascal-rig", "aws-p4d"}, kinds, "UUIDs and every node"));
}
