// Lesson 09: DataParallel needs the model on cuda:device_ids[0] (claim A3.1) and, with
// device_ids omitted, replicates it on every visible GPU (claim A3.3). Each scenario's
// expectations come from its CUDA_VISIBLE_DEVICES and --device-ids.
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
  std::vector<int> device_ids;  // CUDA indices, as the program gets them
  std::vector<int> visible;     // the CUDA_VISIBLE_DEVICES list (integers), empty: unset
};

std::string join(const std::vector<int>& ids, const std::string& separator = ",") {
  std::string text;
  for (int id : ids) text += (text.empty() ? "" : separator) + std::to_string(id);
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

// "no error", or the error(s) the program recorded, quoted.
std::string errors_text(const std::vector<std::string>& errors) {
  if (errors.empty()) return "no error";
  std::string text = errors.size() == 1 ? "the error " : "the errors ";
  for (std::size_t i = 0; i < errors.size(); ++i) text += (i == 0 ? "\"" : ", \"") + errors[i] + "\"";
  return text;
}

// "cuda:2, physical GPU 6".
std::string cuda_device(const Scenario& scenario, int index) {
  return "cuda:" + std::to_string(index) + ", physical GPU " + std::to_string(physical(scenario, index));
}

void check(const Scenario& scenario) {
  GPULAB_REQUIRE_GPUS(gpus_needed(scenario.env), scenario.env);
  const auto run = run_scenario("09", scenario.env, {"--device-ids", join(scenario.device_ids)});
  const int primary = scenario.device_ids.front();
  const std::string device_ids = "device_ids {" + join(scenario.device_ids, ", ") + "}";

  {
    INFO("the article's mistake, the model on cuda:0, raises PyTorch's exact message");
    const std::string message = "module must have its parameters and buffers on device cuda:" +
                                std::to_string(primary) + " (device_ids[0]) but found one of them on device: cuda:0";
    const auto errors = run.errors("model on cuda:0");
    expect_that(errors == std::vector<std::string>{message},
                errors_text({message}) + " (forward with the model on cuda:0 and " + device_ids + ")",
                errors_text(errors));
  }

  std::set<int> expected;
  for (int id : scenario.device_ids) expected.insert(physical(scenario, id));
  {
    INFO("with the model where DataParallel needs it, forward runs: replicas on device_ids' other GPUs, the output "
         "gathered on device_ids[0], and no GPU outside device_ids touched");
    require_that(run.errors("forward").empty(),
                 "forward with " + device_ids + " runs with no error (the model on " +
                     cuda_device(scenario, primary) + ")",
                 errors_text(run.errors("forward")));
    expect_on_gpu(run, "after forward", "weight", physical(scenario, primary));
    expect_on_gpu(run, "after forward", "output", physical(scenario, primary));  // gathered on device_ids[0]
    const auto before = run.usage("before forward");
    const auto after = run.usage("after forward");
    std::set<int> grew;
    for (const auto& [gpu, bytes] : after)
      if (bytes > used_on(before, gpu)) grew.insert(gpu);
    expect_that(std::includes(expected.begin(), expected.end(), grew.begin(), grew.end()),
                "memory grows during forward only on " + gpus(expected) + " (" + device_ids + ")",
                "it grew on " + gpus(grew));
    for (int id : scenario.device_ids) {
      if (id == primary) continue;
      const int gpu = physical(scenario, id);
      expect_that(used_on(after, gpu) > used_on(before, gpu),
                  "memory grows during forward on physical GPU " + std::to_string(gpu) + " (the replica on cuda:" +
                      std::to_string(id) + ")",
                  mib(used_on(before, gpu)) + " there before forward, " + mib(used_on(after, gpu)) + " after");
    }
  }
  {
    INFO("the contexts after forward: the GPUs of " << device_ids << ", and physical GPU " << physical(scenario, 0)
                                                    << " too, where the article's mistake put the model (cuda:0)");
    std::set<int> touched = expected;
    touched.insert(physical(scenario, 0));  // the article's mistake put the model on cuda:0 first
    expect_contexts(run, "after forward", touched);
  }

  {
    INFO("with device_ids omitted, every visible GPU gets a replica and cuda:0 is the primary");
    require_that(run.errors("uncaught").empty(), "the program runs to its end, with no error outside its attempts",
                 errors_text(run.errors("uncaught")));
    require_that(run.errors("defaults").empty(),
                 "forward with device_ids omitted runs with no error (the model on " + cuda_device(scenario, 0) + ")",
                 errors_text(run.errors("defaults")));
    const int visible =
        scenario.visible.empty() ? physical_gpus(scenario.env) : static_cast<int>(scenario.visible.size());
    expect_equal("the GPUs DataParallel uses with device_ids omitted (every visible GPU)",
                 run.fact("default_device_ids"), visible);
    std::set<int> everyone;
    for (int index = 0; index < visible; ++index) everyone.insert(physical(scenario, index));
    expect_contexts(run, "defaults: after forward", everyone);
    expect_on_gpu(run, "defaults: after forward", "weight", physical(scenario, 0));
    expect_on_gpu(run, "defaults: after forward", "output", physical(scenario, 0));
  }
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

// The stretch: --output-device N gathers the output on cuda:N (-1: the CPU), while the model
// stays on device_ids[0], where DataParallel copies it from.
namespace {

void check_output_device(const Scenario& scenario, int output_device) {
  GPULAB_REQUIRE_GPUS(gpus_needed(scenario.env), scenario.env);
  const auto run = run_scenario(
      "09", scenario.env, {"--device-ids", join(scenario.device_ids), "--output-device", std::to_string(output_device)});
  require_that(run.errors("forward").empty(),
               "forward with device_ids {" + join(scenario.device_ids, ", ") + "} and --output-device " +
                   std::to_string(output_device) + " runs with no error",
               errors_text(run.errors("forward")));
  const int model_gpu = physical(scenario, scenario.device_ids.front());
  const int output_gpu = output_device < 0 ? -1 : physical(scenario, output_device);
  INFO("--output-device " << output_device << " is " << placement(output_gpu) << "; device_ids[0] is cuda:"
                          << scenario.device_ids.front() << ", " << placement(model_gpu));
  expect_on_gpu(run, "after forward", "output", output_gpu);
  expect_on_gpu(run, "after forward", "weight", model_gpu);
}

}  // namespace

TEST_CASE("stretch: device_ids {2, 3} with --output-device 3: the output on physical GPU 3, the model on 2",
          "[lesson09][stretch]") {
  check_output_device({{}, {2, 3}, {}}, 3);
}

TEST_CASE("stretch: under CUDA_VISIBLE_DEVICES=4,5,6,7, device_ids {1, 2} with --output-device -1: the output on "
          "the CPU, the model on physical GPU 5",
          "[lesson09][stretch]") {
  check_output_device({{{"CUDA_VISIBLE_DEVICES", "4,5,6,7"}}, {1, 2}, {4, 5, 6, 7}}, -1);
}

TEST_CASE("stretch: under CUDA_VISIBLE_DEVICES=7,3,5, device_ids {0, 2} with --output-device 1: the output on "
          "physical GPU 3, a GPU outside device_ids",
          "[lesson09][stretch]") {
  check_output_device({{{"CUDA_VISIBLE_DEVICES", "7,3,5"}}, {0, 2}, {7, 3, 5}}, 1);
}

// Generated: DataParallel's device_ids drawn among the visible GPUs, under drawn lists;
// where the model, its replicas and the output are, as the reference solution.
TEST_CASE("generated scenarios: device_ids drawn among the GPUs drawn lists leave", "[lesson09]") {
  Family family;
  family.lesson = "09";
  family.what = "--device-ids under CUDA_VISIBLE_DEVICES lists";
  family.count = 8;
  family.draw = device_ids_scenarios();

  check_against_reference(family);
}
