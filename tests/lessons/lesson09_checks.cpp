// Lesson 09: DataParallel needs the model on cuda:device_ids[0] (claim A3.1) and, with
// device_ids omitted, replicates it on every visible GPU (claim A3.3). Each scenario's
// expectations come from its CUDA_VISIBLE_DEVICES and --device-ids.
#include <set>
#include <sstream>

#include <catch2/catch.hpp>

#include "gpu_requirements.h"
#include "lesson_run.h"

using namespace gpulab::test;

namespace {

struct Scenario {
  Env env;
  std::vector<int> device_ids;  // CUDA indices, as the program gets them
  std::vector<int> visible;     // the CUDA_VISIBLE_DEVICES list (integers), empty: unset
};

std::string join(const std::vector<int>& ids) {
  std::string text;
  for (int id : ids) text += (text.empty() ? "" : ",") + std::to_string(id);
  return text;
}

// The physical GPU of CUDA index `index` in `scenario`.
int physical(const Scenario& scenario, int index) {
  const int entry = scenario.visible.empty() ? index : scenario.visible.at(static_cast<std::size_t>(index));
  return cuda_order(scenario.env).at(static_cast<std::size_t>(entry));
}

std::uint64_t used_on(const std::map<int, std::uint64_t>& usage, int gpu) {
  const auto found = usage.find(gpu);
  return found == usage.end() ? 0 : found->second;
}

void check(const Scenario& scenario) {
  GPULAB_REQUIRE_GPUS(gpus_needed(scenario.env), scenario.env);
  const auto run = run_lesson("09", scenario.env, {"--device-ids", join(scenario.device_ids)});
  const int primary = scenario.device_ids.front();

  INFO("the article's mistake, the model on cuda:0, raises PyTorch's exact message");
  CHECK(run.errors("model on cuda:0") ==
        std::vector<std::string>{"module must have its parameters and buffers on device cuda:" +
                                 std::to_string(primary) +
                                 " (device_ids[0]) but found one of them on device: cuda:0"});

  INFO("with the model where DataParallel needs it, forward runs: replicas on device_ids' other GPUs, the output "
       "gathered on device_ids[0], and no GPU outside device_ids touched");
  REQUIRE(run.errors("forward").empty());
  CHECK(run.physical_of("after forward", "weight") == physical(scenario, primary));
  CHECK(run.physical_of("after forward", "output") == physical(scenario, primary));  // gathered on device_ids[0]
  std::set<int> expected;
  for (int id : scenario.device_ids) expected.insert(physical(scenario, id));
  const auto before = run.usage("before forward");
  const auto after = run.usage("after forward");
  for (const auto& [gpu, bytes] : after)
    if (bytes > used_on(before, gpu)) CHECK(expected.count(gpu) == 1);  // memory grew on device_ids' GPUs only
  for (int id : scenario.device_ids)
    if (id != primary) CHECK(used_on(after, physical(scenario, id)) > used_on(before, physical(scenario, id)));
  std::set<int> touched = expected;
  touched.insert(physical(scenario, 0));  // the article's mistake put the model on cuda:0 first
  const auto contexts_after = run.contexts("after forward");
  CHECK(std::set<int>(contexts_after.begin(), contexts_after.end()) == touched);

  INFO("with device_ids omitted, every visible GPU gets a replica and cuda:0 is the primary");
  REQUIRE(run.errors("defaults").empty());
  const int visible = scenario.visible.empty() ? physical_gpus(scenario.env) : static_cast<int>(scenario.visible.size());
  CHECK(run.fact("default_device_ids") == visible);
  std::set<int> everyone;
  for (int index = 0; index < visible; ++index) everyone.insert(physical(scenario, index));
  const auto contexts = run.contexts("defaults: after forward");
  CHECK(std::set<int>(contexts.begin(), contexts.end()) == everyone);
  CHECK(run.physical_of("defaults: after forward", "weight") == physical(scenario, 0));
  CHECK(run.physical_of("defaults: after forward", "output") == physical(scenario, 0));
}

}  // namespace

TEST_CASE("the article's device_ids {2, 3}: the model must be on cuda:2, and the replicas use physical GPUs 2 and 3",
          "[lesson09]") {
  check({{}, {2, 3}, {}});
}

TEST_CASE("device_ids {3, 1}: the model must be on cuda:3, device_ids[0], not on the smallest id", "[lesson09]") {
  check({{}, {3, 1}, {}});
}

TEST_CASE("under CUDA_VISIBLE_DEVICES=4,5,6,7, device_ids {2, 3} are physical GPUs 6 and 7", "[lesson09]") {
  check({{{"CUDA_VISIBLE_DEVICES", "4,5,6,7"}}, {2, 3}, {4, 5, 6, 7}});
}

TEST_CASE("under CUDA_VISIBLE_DEVICES=1,2,5, device_ids {2, 1} put the model on physical GPU 5", "[lesson09]") {
  check({{{"CUDA_VISIBLE_DEVICES", "1,2,5"}}, {2, 1}, {1, 2, 5}});
}
