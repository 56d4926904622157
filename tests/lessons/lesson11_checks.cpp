// Lesson 11: the primary GPU, device_ids[0], carries more than the others (claim A3.4): the
// gathered output and the summed gradients live there. On unlike GPUs DataParallel warns;
// the learner leaves out every GPU under 75% of the largest memory and puts the largest
// first. Expectations come from each scenario's node file and visibility.
#include <algorithm>
#include <numeric>
#include <regex>
#include <set>
#include <sstream>
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

// The lesson's model and batch: Linear(2048, 2048), 512 rows.
constexpr std::uint64_t kGradientBytes = (2048ull * 2048 + 2048) * sizeof(float);
constexpr std::uint64_t kOutputBytes = 512ull * 2048 * sizeof(float);

struct Scenario {
  Env env;
  std::vector<int> visible;  // physical GPUs as CUDA enumerates them under the scenario
};

// PyTorch's imbalance text (torch/nn/parallel/data_parallel.py, _check_balance).
std::string imbalance(int smaller, int larger) {
  return "\n    There is an imbalance between your GPUs. You may want to exclude GPU " + std::to_string(smaller) +
         " which\n    has less than 75% of the memory or cores of GPU " + std::to_string(larger) +
         ". You can do so by setting\n    the device_ids argument to DataParallel, or by setting the "
         "CUDA_VISIBLE_DEVICES\n    environment variable.";
}

// "GPU 2 (physical GPU 2)": PyTorch names GPUs by CUDA index, the learner by nvidia-smi's number.
std::string warned_gpu(const Scenario& scenario, int cuda_index) {
  const auto index = static_cast<std::size_t>(cuda_index);
  const bool known = cuda_index >= 0 && index < scenario.visible.size();
  return "GPU " + std::to_string(cuda_index) +
         (known ? " (physical GPU " + std::to_string(scenario.visible[index]) + ")" : "");
}

// One warning in words: "the imbalance warning about GPU 1 (physical GPU 0) against GPU 2 (physical GPU 2)" for
// PyTorch's imbalance text, the text itself, quoted, for anything else.
std::string warning_text(const Scenario& scenario, const std::string& message) {
  std::smatch numbers;
  static const std::regex pattern("exclude GPU ([0-9]+) which[\\s\\S]*cores of GPU ([0-9]+)\\.");
  if (std::regex_search(message, numbers, pattern)) {
    const int smaller = std::stoi(numbers[1]);
    const int larger = std::stoi(numbers[2]);
    if (message == imbalance(smaller, larger))
      return "the imbalance warning about " + warned_gpu(scenario, smaller) + " against " +
             warned_gpu(scenario, larger);
  }
  std::string flat;  // the warning on one line
  std::istringstream lines(message);
  for (std::string line; std::getline(lines, line);) {
    const auto first = line.find_first_not_of(' ');
    if (first != std::string::npos) flat += (flat.empty() ? "" : " ") + line.substr(first);
  }
  return "the warning \"" + flat + "\"";
}

std::string warnings_text(const Scenario& scenario, const std::vector<std::string>& warnings) {
  if (warnings.empty()) return "no warning";
  std::string text;
  for (std::size_t i = 0; i < warnings.size(); ++i)
    text += (i == 0 ? "" : i + 1 == warnings.size() ? " and " : ", ") + warning_text(scenario, warnings[i]);
  return text;
}

// The primary DataParallel chose: where `tensors` are after backward. Any GPU of `most`, the
// GPUs tied for the most memory, is right (the task asks for "the GPU with the most memory":
// on a tie, any of them). Returns the one observed (-1 when it is none of them).
int expect_primary_among(const LessonRun& run, const std::vector<const char*>& tensors, const std::set<int>& most) {
  const int observed = run.physical_of("after backward", tensors.front());
  const bool right = most.count(observed) == 1;
  expect_that(right,
              std::string(tensors.front()) + " on the GPU with the most memory: " + gpus(most) +
                  (most.size() > 1 ? " (any of them, on a tie)" : ""),
              std::string(tensors.front()) + " " + placement(observed));
  for (std::size_t i = 1; right && i < tensors.size(); ++i) expect_on_gpu(run, "after backward", tensors[i], observed);
  return right ? observed : -1;
}

void check(const Scenario& scenario) {
  GPULAB_REQUIRE_GPUS(gpus_needed(scenario.env), scenario.env);
  // The expected choice comes from the node file.
  require_that(simulated(scenario.env), "the simulated node, whose node file these checks read", "real GPUs");
  const auto run = run_scenario("11", scenario.env);
  require_no_errors(run, "the program runs");

  std::string node_name = "dgx-a100";
  for (const auto& [name, value] : scenario.env)
    if (name == "GPULAB_NODE" && value) node_name = *value;
  const gpulab::Node node_file = node(node_name);
  const auto gpu = [&](int cuda_index) {
    return node_file.gpus[static_cast<std::size_t>(scenario.visible[static_cast<std::size_t>(cuda_index)])];
  };

  // What the lesson asks for: no GPU under 75% of the largest memory; the largest first.
  std::vector<int> ids(scenario.visible.size());
  std::iota(ids.begin(), ids.end(), 0);
  std::uint64_t largest = 0;
  for (int id : ids) largest = std::max(largest, gpu(id).total_bytes);
  ids.erase(std::remove_if(ids.begin(), ids.end(), [&](int id) { return 4 * gpu(id).total_bytes < 3 * largest; }),
            ids.end());
  std::set<int> most;  // tied for the most memory: each a right primary
  for (int id : ids)
    if (gpu(id).total_bytes == largest) most.insert(scenario.visible[static_cast<std::size_t>(id)]);

  std::set<int> expected;
  for (int id : ids) expected.insert(scenario.visible[static_cast<std::size_t>(id)]);
  {
    INFO("the replicas run on exactly the GPUs with at least 75% of the largest memory");
    expect_contexts(run, "after backward", expected);
  }

  int primary = -1;
  {
    INFO("the primary is the GPU with the most memory, and holds the model, its gradients and the gathered output");
    primary = expect_primary_among(run, {"weight", "weight.grad", "output"}, most);
  }
  if (primary < 0) return;
  // The warning numbers the GPUs in device_ids' order, the primary first.
  std::stable_sort(ids.begin(), ids.end(), [&](int a, int b) {
    const int pa = scenario.visible[static_cast<std::size_t>(a)], pb = scenario.visible[static_cast<std::size_t>(b)];
    return (pa == primary) > (pb == primary) || ((pa == primary) == (pb == primary) && gpu(a).total_bytes > gpu(b).total_bytes);
  });

  {
    INFO("DataParallel no longer warns about memory; it may about cores, which only the GPUs' SMs decide (its "
         "warning numbers the GPUs as CUDA does: GPU 2 is cuda:2)");
    std::vector<std::string> warnings;
    for (const auto& warning : run.report.at("warnings")) warnings.push_back(warning.at("message"));
    std::vector<std::string> expected_warnings;
    if (ids.size() > 1) {
      std::size_t fewer = 0, more = 0;
      for (std::size_t i = 1; i < ids.size(); ++i) {
        if (gpu(ids[i]).sm_count < gpu(ids[fewer]).sm_count) fewer = i;
        if (gpu(ids[i]).sm_count > gpu(ids[more]).sm_count) more = i;
      }
      if (4 * gpu(ids[fewer]).sm_count < 3 * gpu(ids[more]).sm_count)
        expected_warnings.push_back(imbalance(ids[fewer], ids[more]));
    }
    expect_that(warnings == expected_warnings, warnings_text(scenario, expected_warnings),
                warnings_text(scenario, warnings));
  }

  if (ids.size() > 1) {
    INFO("beyond its context, the primary holds at least the gathered output and the gradients more than any other");
    const auto used = run.usage("after backward");
    const auto beyond_context = [&](int physical) {
      require_that(used.count(physical) == 1,
                   "memory on physical GPU " + std::to_string(physical) + " (after backward)", "none there");
      return used.at(physical) - node_file.gpus[static_cast<std::size_t>(physical)].context_bytes;
    };
    for (int other : expected) {
      if (other == primary) continue;
      const std::uint64_t on_primary = beyond_context(primary), on_other = beyond_context(other);
      expect_that(on_primary >= on_other + kOutputBytes + kGradientBytes,
                  "beyond their CUDA contexts, physical GPU " + std::to_string(primary) +
                      " (the primary) holds at least " + mib(kOutputBytes + kGradientBytes) +
                      " (the gathered output and the gradients) more than physical GPU " + std::to_string(other),
                  "physical GPU " + std::to_string(primary) + " holds " + mib(on_primary) +
                      " beyond its context, physical GPU " + std::to_string(other) + " holds " + mib(on_other));
    }
  }
}

}  // namespace

TEST_CASE("dgx-a100, eight alike: all eight GPUs, no warning, and cuda:0 carries more than the others", "[lesson11]") {
  check({{}, cuda_order()});
}

TEST_CASE("dgx-a100 under CUDA_VISIBLE_DEVICES=5,2,7: physical 5 is the primary and carries more", "[lesson11]") {
  const Env env{{"CUDA_VISIBLE_DEVICES", "5,2,7"}};
  const auto order = cuda_order(env);
  check({env, {order[5], order[2], order[7]}});
}

TEST_CASE("workstation-mixed: the two 24 GB GPUs only, the larger one first; the cores warning remains", "[lesson11]") {
  const Env env{{"GPULAB_NODE", "workstation-mixed"}};
  check({env, cuda_order(env)});
}

TEST_CASE("workstation-mixed, nvidia-smi's GPUs 0 and 3 visible: the 11 GB GPU is left out, one GPU remains",
          "[lesson11]") {
  const Env env{{"GPULAB_NODE", "workstation-mixed"}, {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}, {"CUDA_VISIBLE_DEVICES", "0,3"}};
  check({env, {0, 3}});
}

// The stretch: with --no-warnings DataParallel warns about nothing, cores included, and the
// GPU with the most memory is still the primary. Each scenario names the GPUs that remain.
namespace {

void check_no_warnings(const Env& env, const std::set<int>& expected, const std::set<int>& most, const std::string& why) {
  GPULAB_REQUIRE_GPUS(gpus_needed(env), env);
  require_that(simulated(env), "the simulated node, whose node file these checks read", "real GPUs");
  const auto run = run_scenario("11", env, {"--no-warnings"});
  require_no_errors(run, "the program runs with --no-warnings");
  INFO(why);
  std::vector<std::string> warnings;
  for (const auto& warning : run.report.at("warnings")) warnings.push_back(warning.at("message"));
  std::string observed;
  for (const auto& warning : warnings) observed += (observed.empty() ? "\"" : ", \"") + warning + "\"";
  expect_that(warnings.empty(), "no warning from DataParallel", observed.empty() ? "no warning" : observed);
  expect_contexts(run, "after backward", expected);
  expect_primary_among(run, {"weight", "output"}, most);
}

}  // namespace

TEST_CASE("stretch: workstation-mixed with --no-warnings: only the RTX 3090 (the most memory), since the RTX 4090 "
          "has over a third more SMs",
          "[lesson11][stretch]") {
  check_no_warnings({{"GPULAB_NODE", "workstation-mixed"}}, {2}, {2},
                    "nvidia-smi's GPU 2, the RTX 3090 (24576 MiB, 82 SMs), has the most memory; the RTX 4090 "
                    "(24564 MiB, 128 SMs) has too many SMs beside it, the others too little memory");
}

TEST_CASE("stretch: pascal-rig with --no-warnings: the three GTX 1080 Ti, alike in memory and SMs",
          "[lesson11][stretch]") {
  const Env env{{"GPULAB_NODE", "pascal-rig"}};
  check_no_warnings(env, {1, 2, 3}, {1, 2, 3},
                    "the GTX 1080 (8 GiB) has under 75% of a 1080 Ti's 11 GiB; the three 1080 Ti have 28 SMs each");
}

TEST_CASE("stretch: dgx-a100 with --no-warnings: all eight alike, all eight used", "[lesson11][stretch]") {
  check_no_warnings({}, {0, 1, 2, 3, 4, 5, 6, 7}, {0, 1, 2, 3, 4, 5, 6, 7}, "eight A100s: nothing to leave out");
}

// Generated: nodes and lists; which GPUs DataParallel uses and where the model sits, as the
// reference solution (a primary tied for the most memory is the hand-written checks' to
// accept: the families compare with one choice, so they draw where there is no tie).
TEST_CASE("generated scenarios: nodes of unlike GPUs under drawn lists", "[lesson11]") {
  Family family;
  family.lesson = "11";
  family.what = "nodes of unlike GPUs under CUDA_VISIBLE_DEVICES lists";
  family.count = 8;
  family.memory_slack = ~std::uint64_t{0};  // how much each GPU carries is the hand-written checks'
  family.draw = [](Rng& rng) {
    ListKinds kinds;
    kinds.negative = kinds.out_of_range = kinds.duplicates = false;
    Drawn drawn;
    drawn.env = {{"GPULAB_NODE", "workstation-mixed"}};
    if (draw_int(rng, 0, 2) != 0) drawn.env.emplace_back("CUDA_VISIBLE_DEVICES", draw_list_with_gpus(rng, "workstation-mixed", kinds, 4));
    if (draw_int(rng, 0, 1) == 0) drawn.env.emplace_back("CUDA_DEVICE_ORDER", draw_one(rng, {"PCI_BUS_ID", "FASTEST_FIRST"}));
    return drawn;
  };
  check_against_reference(family);
}
