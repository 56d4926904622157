// Lesson 10: the stray GPU-0 memory of the article's DataParallel setup (claim A3.2) is a
// CUDA context, made by an unguarded call on the main thread, whose current device is 0.
// Fixed, the process uses exactly the GPUs device_ids names. Expectations come from each
// scenario's CUDA_VISIBLE_DEVICES and --device-ids.
#include <set>

#include <catch2/catch.hpp>

#include "gpu_requirements.h"
#include "lesson_run.h"

using namespace gpulab::test;

namespace {

struct Scenario {
  Env env;
  std::vector<int> device_ids;
  std::vector<int> visible;  // the CUDA_VISIBLE_DEVICES list (integers), empty: unset
};

int physical(const Scenario& scenario, int index) {
  const int entry = scenario.visible.empty() ? index : scenario.visible.at(static_cast<std::size_t>(index));
  return cuda_order(scenario.env).at(static_cast<std::size_t>(entry));
}

void check(const Scenario& scenario) {
  GPULAB_REQUIRE_GPUS(gpus_needed(scenario.env), scenario.env);
  std::string ids;
  for (int id : scenario.device_ids) ids += (ids.empty() ? "" : ",") + std::to_string(id);
  const auto run = run_lesson("10", scenario.env, {"--device-ids", ids});
  REQUIRE(run.report.at("errors").empty());

  std::set<int> expected;
  for (int id : scenario.device_ids) expected.insert(physical(scenario, id));
  const auto contexts = run.contexts("after training");
  INFO("this process has CUDA contexts on the GPUs of device_ids and nowhere else (GPU of cuda:0: "
       << physical(scenario, 0) << ")");
  CHECK(std::set<int>(contexts.begin(), contexts.end()) == expected);
  for (const auto& [gpu, bytes] : run.usage("after training")) CHECK(expected.count(gpu) == 1);

  INFO("the model is on device_ids[0], and the replicas ran: memory beyond a context on every GPU of device_ids");
  for (const char* tensor : {"weight", "bias"})
    CHECK(run.physical_of("after training", tensor) == physical(scenario, scenario.device_ids.front()));
  const auto used = run.usage("after training");
  for (int gpu : expected) {
    const std::uint64_t context = simulated(scenario.env) ? node().gpus[static_cast<std::size_t>(gpu)].context_bytes : 0;
    CHECK(used.count(gpu) == 1);
    if (used.count(gpu) == 1) CHECK(used.at(gpu) > context);
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
