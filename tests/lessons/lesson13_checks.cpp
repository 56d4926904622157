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
  int ranks;
  std::vector<int> visible;  // the CUDA_VISIBLE_DEVICES list; empty: unset
};

void check(const Scenario& scenario) {
  GPULAB_REQUIRE_GPUS(gpus_needed(scenario.env), scenario.env);
  const auto run = run_launched("13", {scenario.ranks}, scenario.env);
  require_all_ranks_ok(run, "the ranks train");

  std::set<std::string> hashes;
  for (int r = 0; r < scenario.ranks; ++r) {
    const int entry = scenario.visible.empty() ? r : scenario.visible.at(static_cast<std::size_t>(r));
    const int gpu = cuda_order(scenario.env).at(static_cast<std::size_t>(entry));
    const auto& worker = run.rank(r);
    const std::string who = "rank " + std::to_string(r);
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
