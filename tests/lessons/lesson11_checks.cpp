// Lesson 11: the primary GPU, device_ids[0], carries more than the others (claim A3.4): the
// gathered output and the summed gradients live there. On unlike GPUs DataParallel warns;
// the learner leaves out every GPU under 75% of the largest memory and puts the largest
// first. Expectations come from each scenario's node file and visibility.
#include <algorithm>
#include <numeric>
#include <set>

#include <catch2/catch.hpp>

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

void check(const Scenario& scenario) {
  GPULAB_REQUIRE_GPUS(gpus_needed(scenario.env), scenario.env);
  REQUIRE(simulated(scenario.env));  // the expected choice comes from the node file
  const auto run = run_lesson("11", scenario.env);
  REQUIRE(run.report.at("errors").empty());

  std::string node_name = "dgx-a100";
  for (const auto& [name, value] : scenario.env)
    if (name == "GPULAB_NODE" && value) node_name = *value;
  const gpulab::Node gpus = node(node_name);
  const auto gpu = [&](int cuda_index) { return gpus.gpus[static_cast<std::size_t>(scenario.visible[static_cast<std::size_t>(cuda_index)])]; };

  // What the lesson asks for: no GPU under 75% of the largest memory; the largest first.
  std::vector<int> ids(scenario.visible.size());
  std::iota(ids.begin(), ids.end(), 0);
  std::uint64_t largest = 0;
  for (int id : ids) largest = std::max(largest, gpu(id).total_bytes);
  ids.erase(std::remove_if(ids.begin(), ids.end(), [&](int id) { return 4 * gpu(id).total_bytes < 3 * largest; }),
            ids.end());
  std::stable_sort(ids.begin(), ids.end(), [&](int a, int b) { return gpu(a).total_bytes > gpu(b).total_bytes; });
  const int primary = scenario.visible[static_cast<std::size_t>(ids.front())];

  INFO("the replicas run on exactly the GPUs with at least 75% of the largest memory");
  std::set<int> expected;
  for (int id : ids) expected.insert(scenario.visible[static_cast<std::size_t>(id)]);
  const auto contexts = run.contexts("after backward");
  CHECK(std::set<int>(contexts.begin(), contexts.end()) == expected);

  INFO("the primary is the GPU with the most memory, and holds the model, its gradients and the gathered output");
  for (const char* tensor : {"weight", "weight.grad", "output"}) CHECK(run.physical_of("after backward", tensor) == primary);

  INFO("DataParallel no longer warns about memory; it may about cores, which only the GPUs' SMs decide");
  std::vector<std::string> warnings;
  for (const auto& warning : run.report.at("warnings")) warnings.push_back(warning.at("message"));
  std::vector<std::string> expected_warnings;
  if (ids.size() > 1) {
    std::size_t fewer = 0, more = 0;
    for (std::size_t i = 1; i < ids.size(); ++i) {
      if (gpu(ids[i]).sm_count < gpu(ids[fewer]).sm_count) fewer = i;
      if (gpu(ids[i]).sm_count > gpu(ids[more]).sm_count) more = i;
    }
    if (4 * gpu(ids[fewer]).sm_count < 3 * gpu(ids[more]).sm_count) expected_warnings.push_back(imbalance(ids[fewer], ids[more]));
  }
  CHECK(warnings == expected_warnings);

  if (ids.size() > 1) {
    INFO("beyond its context, the primary holds at least the gathered output and the gradients more than any other");
    const auto used = run.usage("after backward");
    const auto beyond_context = [&](int physical) {
      return used.at(physical) - gpus.gpus[static_cast<std::size_t>(physical)].context_bytes;
    };
    for (int other : expected)
      if (other != primary) CHECK(beyond_context(primary) >= beyond_context(other) + kOutputBytes + kGradientBytes);
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
