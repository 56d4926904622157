// Lesson 14: forgetting set_device under DDP (claim A4.2). Every rank moves its model and
// data with an index-less torch::kCUDA; fixed, each rank's process is seen by nvidia-smi on
// its own GPU only (LOCAL_RANK's), with its context and its shard there. On tiny2, whose
// GPUs hold 2 GiB, two 900 MiB shards on one GPU do not fit: the fix is what makes it run.
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
  std::vector<std::string> args;
  int nodes = 1;
};

void check(const Scenario& scenario) {
  GPULAB_REQUIRE_GPUS(gpus_needed(scenario.env), scenario.env);
  const auto run = run_launched("14", {scenario.ranks, scenario.nodes}, scenario.env, scenario.args);
  require_all_ranks_ok(run, "the ranks train");
  for (int r = 0; r < scenario.ranks * scenario.nodes; ++r) {
    const int local = r % scenario.ranks;  // LOCAL_RANK: the process's index on its node
    const int entry = scenario.visible.empty() ? local : scenario.visible.at(static_cast<std::size_t>(local));
    const int gpu = cuda_order(scenario.env).at(static_cast<std::size_t>(entry));
    const auto& worker = run.rank(r);
    const std::string who =
        "rank " + std::to_string(r) + (scenario.nodes > 1 ? " (node" + std::to_string(r / scenario.ranks) + ")" : "");
    INFO(who << " has LOCAL_RANK " << worker.local_rank << ": its GPU is physical GPU " << gpu);
    expect_that(worker.listed_on() == std::set<int>{gpu}, who + "'s process listed by nvidia-smi on " + gpus({gpu}),
                "on " + gpus(worker.listed_on()));
    require_that(worker.report.has_value(), who + "'s report", "none");
    expect_contexts(*worker.report, "after training", {gpu});
    expect_on_gpu(*worker.report, "after training", "shard", gpu);
    expect_on_gpu(*worker.report, "after training", "weight", gpu);
    // The model and the shard move with an index-less torch::kCUDA: the current device decides
    // where they, and any later index-less call, go. It must be the model's device, in the
    // process's own numbering (the fact and the weight's device both use it).
    const std::string model_device = worker.report->device_of("after training", "weight");
    const auto& fact = worker.report->fact("current_device");
    const std::string current = fact.is_number_integer() ? "cuda:" + std::to_string(fact.get<int>()) : fact.dump();
    expect_that(current == model_device,
                who + "'s current device, where an index-less torch::kCUDA puts a tensor, is its model's " +
                    model_device,
                current);
  }
}

}  // namespace

TEST_CASE("every GPU visible, 4 ranks: rank r only on physical GPU r", "[lesson14]") { check({{}, 4, {}, {}}); }

TEST_CASE("CUDA_VISIBLE_DEVICES=6,7 and 2 ranks: physical GPUs 6 and 7, each rank on its own", "[lesson14]") {
  check({{{"CUDA_VISIBLE_DEVICES", "6,7"}}, 2, {6, 7}, {}});
}

TEST_CASE("tiny2 (two 2 GiB GPUs), 2 ranks with 900 MiB shards: both fit, one per GPU", "[lesson14]") {
  check({{{"GPULAB_NODE", "tiny2"}}, 2, {}, {"--shard-mib", "900"}});
}

TEST_CASE("two dgx-a100 nodes, 2 ranks each (fewer ranks than GPUs): on both nodes LOCAL_RANK r on physical GPU r, "
          "RANK 2 and 3 included",
          "[lesson14]") {
  check({{}, 2, {}, {}, 2});
}

// The stretch: with --loader-thread 1 the shard is made on a worker thread, whose current
// device starts at 0 again; it must still land on the rank's own GPU, and nowhere else.
TEST_CASE("stretch: --loader-thread 1, 2 ranks: each shard made on a worker thread lands on the rank's GPU",
          "[lesson14][stretch]") {
  INFO("the current device is per thread: a new thread starts on cuda:0");
  check({{}, 2, {}, {"--loader-thread", "1"}});
}

TEST_CASE("stretch: --loader-thread 1 under CUDA_VISIBLE_DEVICES=3,6: physical GPUs 3 and 6", "[lesson14][stretch]") {
  INFO("the current device is per thread: a new thread starts on cuda:0");
  check({{{"CUDA_VISIBLE_DEVICES", "3,6"}}, 2, {3, 6}, {"--loader-thread", "1"}});
}

TEST_CASE("stretch: --loader-thread 1 on two nodes of 2 ranks: ranks 2 and 3 on their node's physical GPUs 0 and 1",
          "[lesson14][stretch]") {
  INFO("LOCAL_RANK picks the GPU on each node; RANK runs on to 3");
  check({{}, 2, {}, {"--loader-thread", "1"}, 2});
}
