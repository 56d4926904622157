// Lesson 13: one process per GPU (claim A4.1). Under `gpulab launch`, rank r uses the r-th
// GPU its CUDA_VISIBLE_DEVICES lists and no other — seen from outside by the launcher, which
// samples the node state while the ranks run — and the ranks train one model: identical
// parameters after the steps, a falling loss. Expectations come from each scenario's list.
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "expect.h"
#include "gpu_requirements.h"
#include "launched_run.h"

using namespace gpulab::test;

namespace {

struct Scenario {
  Env env;
  int ranks;                 // per node
  std::vector<int> visible;  // the CUDA_VISIBLE_DEVICES list (every node's); empty: unset
  int nodes = 1;
};

void check(const Scenario& scenario) {
  GPULAB_REQUIRE_GPUS(gpus_needed(scenario.env), scenario.env);
  const auto run = run_launched("13", {scenario.ranks, scenario.nodes}, scenario.env);
  require_all_ranks_ok(run, "the ranks train");

  std::set<std::string> hashes;
  for (int r = 0; r < scenario.ranks * scenario.nodes; ++r) {
    const int local = r % scenario.ranks;  // LOCAL_RANK: the process's index on its node
    const int entry = scenario.visible.empty() ? local : scenario.visible.at(static_cast<std::size_t>(local));
    const int gpu = cuda_order(scenario.env).at(static_cast<std::size_t>(entry));
    const auto& worker = run.rank(r);
    const std::string who =
        "rank " + std::to_string(r) + (scenario.nodes > 1 ? " (node" + std::to_string(r / scenario.ranks) + ")" : "");
    INFO(who << " (LOCAL_RANK " << worker.local_rank << ") should use physical GPU " << gpu << " only");
    expect_that(worker.listed_on() == std::set<int>{gpu}, who + "'s process listed by nvidia-smi on " + gpus({gpu}),
                "on " + gpus(worker.listed_on()));
    require_that(worker.report.has_value(), who + "'s report", "none");
    expect_contexts(*worker.report, "after training", {gpu});
    expect_on_gpu(*worker.report, "after training", "weight", gpu);
    hashes.insert(worker.report->fact("parameters_hash").get<std::string>());
  }
  expect_that(hashes.size() == 1, "the same parameters on every rank after training (one hash)",
              std::to_string(hashes.size()) + " different parameter hashes");
  const auto& rank0 = *run.rank(0).report;
  const double first = std::stod(rank0.fact("loss_first").get<std::string>());
  const double last = std::stod(rank0.fact("loss_last").get<std::string>());
  expect_that(last < first / 2, "the loss at least halves over the steps",
              "loss " + rank0.fact("loss_first").get<std::string>() + " -> " + rank0.fact("loss_last").get<std::string>());
}

}  // namespace

TEST_CASE("the lesson's scenario, CUDA_VISIBLE_DEVICES=4,5,6,7 and 4 ranks: rank r on physical GPU 4+r", "[lesson13]") {
  check({{{"CUDA_VISIBLE_DEVICES", "4,5,6,7"}}, 4, {4, 5, 6, 7}});
}

TEST_CASE("every GPU visible, 4 ranks: rank r on physical GPU r", "[lesson13]") { check({{}, 4, {}}); }

TEST_CASE("CUDA_VISIBLE_DEVICES=1,3,5,7 and 2 ranks: physical GPUs 1 and 3", "[lesson13]") {
  check({{{"CUDA_VISIBLE_DEVICES", "1,3,5,7"}}, 2, {1, 3, 5, 7}});
}

TEST_CASE("two nodes of 2 ranks under CUDA_VISIBLE_DEVICES=4,5,6,7: ranks 2 and 3 are the second node's first two, "
          "on its physical GPUs 4 and 5",
          "[lesson13]") {
  check({{{"CUDA_VISIBLE_DEVICES", "4,5,6,7"}}, 2, {4, 5, 6, 7}, 2});
}

// The stretch: each rank reports the UUID of its GPU (fact "gpu_uuid"); it must be the UUID,
// in the node file, of the physical GPU the launcher saw the rank use.
namespace {

void check_uuids(const Scenario& scenario, const std::string& node_name) {
  GPULAB_REQUIRE_GPUS(gpus_needed(scenario.env), scenario.env);
  require_that(simulated(scenario.env), "the simulated node, whose node file names each GPU's UUID", "real GPUs");
  const auto run = run_launched("13", {scenario.ranks, scenario.nodes}, scenario.env);
  require_all_ranks_ok(run, "the ranks train");
  const auto& node_file = node(node_name);
  for (int r = 0; r < scenario.ranks * scenario.nodes; ++r) {
    const int local = r % scenario.ranks;
    const int entry = scenario.visible.empty() ? local : scenario.visible.at(static_cast<std::size_t>(local));
    const int gpu = cuda_order(scenario.env).at(static_cast<std::size_t>(entry));
    const auto& worker = run.rank(r);
    const std::string who = "rank " + std::to_string(r);
    require_that(worker.report.has_value(), who + "'s report", "none");
    expect_fact(*worker.report, who, "gpu_uuid", node_file.gpus.at(static_cast<std::size_t>(gpu)).uuid,
                "(physical GPU " + std::to_string(gpu) + ")");
  }
}

}  // namespace

TEST_CASE("stretch: CUDA_VISIBLE_DEVICES=5,2 and 2 ranks report the UUIDs of physical GPUs 5 and 2",
          "[lesson13][stretch]") {
  check_uuids({{{"CUDA_VISIBLE_DEVICES", "5,2"}}, 2, {5, 2}}, "dgx-a100");
}

TEST_CASE("stretch: workstation-mixed, 2 ranks: cuda:0 and cuda:1 are nvidia-smi's GPUs 1 and 0 there",
          "[lesson13][stretch]") {
  check_uuids({{{"GPULAB_NODE", "workstation-mixed"}}, 2, {}}, "workstation-mixed");
}

TEST_CASE("stretch: two nodes of 2 ranks under CUDA_VISIBLE_DEVICES=5,2: ranks 2 and 3 report the UUIDs of their own "
          "node's GPUs 5 and 2",
          "[lesson13][stretch]") {
  check_uuids({{{"CUDA_VISIBLE_DEVICES", "5,2"}}, 2, {5, 2}, 2}, "dgx-a100");
}
