// Lesson 10: the stray GPU-0 memory of the article's DataParallel setup (claim A3.2) is a
// CUDA context, made by an unguarded call on the main thread, whose current device is 0.
// Fixed, the process uses exactly the GPUs device_ids names. Expectations come from each
// scenario's CUDA_VISIBLE_DEVICES and --device-ids.
#include <algorithm>
#include <set>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "expect.h"
#include "generated.h"
#include "gpu_requirements.h"
#include "lesson_run.h"

using namespace gpulab::test;

namespace {

struct Scenario {
  Env env;
  std::vector<int> device_ids;
  std::vector<int> visible;  // the CUDA_VISIBLE_DEVICES list (integers), empty: unset
  std::vector<std::string> args = {};  // more program arguments
};

int physical(const Scenario& scenario, int index) {
  const int entry = scenario.visible.empty() ? index : scenario.visible.at(static_cast<std::size_t>(index));
  return cuda_order(scenario.env).at(static_cast<std::size_t>(entry));
}

void check(const Scenario& scenario) {
  GPULAB_REQUIRE_GPUS(gpus_needed(scenario.env), scenario.env);
  std::string ids;
  for (int id : scenario.device_ids) ids += (ids.empty() ? "" : ",") + std::to_string(id);
  std::vector<std::string> args = {"--device-ids", ids};
  args.insert(args.end(), scenario.args.begin(), scenario.args.end());
  const auto run = run_scenario("10", scenario.env, args);
  require_no_errors(run, "the program trains");

  std::set<int> expected;
  for (int id : scenario.device_ids) expected.insert(physical(scenario, id));
  const auto used = run.usage("after training");
  {
    INFO("this process has CUDA contexts and memory on the GPUs of device_ids and nowhere else"
         << " (cuda:0 is physical GPU " << physical(scenario, 0) << " here)");
    expect_contexts(run, "after training", expected);
    std::set<int> with_memory;
    for (const auto& entry : used) with_memory.insert(entry.first);
    expect_that(std::includes(expected.begin(), expected.end(), with_memory.begin(), with_memory.end()),
                "memory only on " + gpus(expected) + " (after training)", "memory on " + gpus(with_memory));
  }

  {
    // The batch still moves with an index-less torch::kCUDA: the main thread's current device
    // decides where it goes, and with it every other index-less call of the training loop. It
    // must be the model's device, cuda:device_ids[0] in the program's own numbering (which
    // hiding GPUs in the program may have changed): the fact and the weight's device both use it.
    const std::string model_device = run.device_of("after training", "weight");
    // CUDA's own state, which the library records at the observation; the program's fact
    // only where the backend cannot say (real GPUs).
    const auto& observed = run.observation("after training");
    const auto& fact = observed.contains("current_device") ? observed.at("current_device") : run.fact("current_device");
    const std::string current = fact.is_number_integer() ? "cuda:" + std::to_string(fact.get<int>()) : fact.dump();
    expect_that(current == model_device,
                "the main thread's current device, where the batch's index-less torch::kCUDA puts it, is the "
                "model's " + model_device + " (device_ids[0])",
                current);
  }

  INFO("the model is on device_ids[0], and the replicas ran: memory beyond a context on every GPU of device_ids");
  for (const char* tensor : {"weight", "bias"})
    expect_on_gpu(run, "after training", tensor, physical(scenario, scenario.device_ids.front()));
  for (int gpu : expected) {
    const std::uint64_t context =
        simulated(scenario.env) ? node(gpu_inventory(scenario.env).node).gpus[static_cast<std::size_t>(gpu)].context_bytes : 0;
    const std::string where = "physical GPU " + std::to_string(gpu);
    expect_that(used.count(gpu) == 1, "memory on " + where + " (after training)", "none there");
    if (used.count(gpu) == 1)
      expect_that(used.at(gpu) > context,
                  (context > 0 ? "more than a CUDA context's " + mib(context) : std::string("memory in use")) + " on " +
                      where + " (after training)",
                  mib(used.at(gpu)) + " there");
  }
}

}  // namespace

TEST_CASE("the article's setup, device_ids {2, 3}: physical GPUs 2 and 3, and no context on GPU 0", "[lesson10]") {
  check({{}, {2, 3}, {}});
}

TEST_CASE("device_ids {3, 1}: physical GPUs 3 and 1, and no context on GPU 0", "[lesson10]") {
  check({{}, {3, 1}, {}});
}

TEST_CASE("under CUDA_VISIBLE_DEVICES=4,5,6,7, device_ids {2, 3}: physical GPUs 6 and 7, none on 4", "[lesson10]") {
  check({{{"CUDA_VISIBLE_DEVICES", "4,5,6,7"}}, {2, 3}, {4, 5, 6, 7}});
}

TEST_CASE("the other fix, CUDA_VISIBLE_DEVICES=2,3 with device_ids {0, 1}: GPU 0 is not even visible", "[lesson10]") {
  check({{{"CUDA_VISIBLE_DEVICES", "2,3"}}, {0, 1}, {2, 3}});
}

// The stretch: with --hide-others the program hides every GPU outside device_ids before
// CUDA starts, so nothing it does later (a library's stray call, autograd's device threads)
// can reach them.
TEST_CASE("stretch: with --hide-others, device_ids {3, 1}: contexts on physical GPUs 3 and 1 only",
          "[lesson10][stretch]") {
  check({{}, {3, 1}, {}, {"--hide-others"}});
}

TEST_CASE("stretch: with --hide-others under CUDA_VISIBLE_DEVICES=4,5,6,7, device_ids {2, 0}: "
          "physical GPUs 6 and 4 only",
          "[lesson10][stretch]") {
  const Env env{{"CUDA_VISIBLE_DEVICES", "4,5,6,7"}};
  check({env, {2, 0}, {4, 5, 6, 7}, {"--hide-others"}});
}

TEST_CASE("stretch: with --hide-others under CUDA_VISIBLE_DEVICES=04,05,06,07 (leading zeros), device_ids {2, 0}: "
          "physical GPUs 6 and 4 only",
          "[lesson10][stretch]") {
  const Env env{{"CUDA_VISIBLE_DEVICES", "04,05,06,07"}};
  check({env, {2, 0}, {4, 5, 6, 7}, {"--hide-others"}});
}

TEST_CASE("stretch: with --hide-others on workstation-mixed, device_ids {1, 0}: CUDA's order, not nvidia-smi's",
          "[lesson10][stretch]") {
  GPULAB_REQUIRE_SIMULATED_NODE("this scenario needs the simulated node workstation-mixed");
  const Env env{{"GPULAB_NODE", "workstation-mixed"}};
  check({env, {1, 0}, {}, {"--hide-others"}});
}

// Generated: device_ids drawn among the visible GPUs, under drawn lists; which GPUs the
// process touches (contexts, memory) and where the batch lands, as the reference solution.
TEST_CASE("generated scenarios: device_ids drawn among the GPUs drawn lists leave", "[lesson10]") {
  Family family;
  family.lesson = "10";
  family.what = "--device-ids under CUDA_VISIBLE_DEVICES lists";
  family.count = 8;
  family.draw = device_ids_scenarios();

  check_against_reference(family);
}
