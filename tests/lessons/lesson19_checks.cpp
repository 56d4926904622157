// Lesson 19: worker processes forked by a trainer. A child forked after its parent started
// CUDA cannot use it: every CUDA call there fails with CUDA's "initialization error"
// (docs/reference.md, "fork after CUDA init"); torch::manual_seed starts CUDA too. The
// trainer must fork its workers before CUDA starts, and each worker, a process of its own,
// must then do its GPU work on its own GPU (worker w on the visible GPU w + 1), while the
// trainer's model and output stay on the first visible GPU alone. The checks read each
// worker's report (gpulab::WorkerPool): whether its work finished, where nvidia-smi listed
// its own pid, where its batch was; and the trainer's own observations.
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

std::string joined(const std::vector<int>& values) {
  std::string text;
  for (const int v : values) text += (text.empty() ? "" : ",") + std::to_string(v);
  return text;
}

// `workers[w]`: the physical GPU worker w must work on; `trainer`: the trainer's GPU.
void check_workers(const Env& env, const std::vector<std::string>& args, const std::vector<int>& workers, int trainer) {
  std::string shown_args;
  for (const auto& arg : args) shown_args += " " + arg;
  INFO("scenario: " << shown(env) << "lesson-19" << shown_args << "\nworker w must work on physical GPU "
                    << joined(workers) << " (in worker order), the trainer on physical GPU " << trainer);
  const auto run = run_scenario("19", env, args);
  require_no_errors(run, "the trainer runs");
  const auto& facts = run.report.at("facts");
  INFO("the report's facts: " << facts.dump());

  std::set<int> pids;
  for (std::size_t w = 0; w < workers.size(); ++w) {
    const std::string worker = "worker " + std::to_string(w);
    const std::string prefix = "worker" + std::to_string(w) + "_";
    const bool reported = facts.contains(prefix + "finished");
    require_that(reported, worker + " forked and reported back", "no " + prefix + "finished fact");
    const std::string error = facts.contains(prefix + "error") ? facts.at(prefix + "error").get<std::string>() : "";
    expect_that(facts.at(prefix + "finished") == 1, worker + "'s GPU work finishes",
                "it failed: \"" + error + "\"");
    const std::string gpu = std::to_string(workers[w]);
    // Observed: the library reads the node's process table for the worker's own pid (a
    // worker's own fact "gpus" cannot stand in for it). Its fact batch_gpu is its own
    // report, and adds nothing the listing does not show: not checked.
    expect_fact(run, worker, prefix + "gpus", gpu,
                "(nvidia-smi lists " + worker + "'s own process on physical GPU " + gpu + " alone)");
    if (facts.contains(prefix + "pid")) pids.insert(facts.at(prefix + "pid").get<int>());
  }
  expect_equal("workers_finished", facts.contains("workers_finished") ? facts.at("workers_finished").get<int>() : -1,
               static_cast<int>(workers.size()));
  expect_that(pids.size() == workers.size() && pids.count(run.report.value("pid", 0)) == 0,
              "each worker a process of its own, none the trainer's (" + std::to_string(workers.size()) + " pids)",
              std::to_string(pids.size()) + " distinct worker pids");

  for (const char* tensor : {"weight", "output"}) expect_on_gpu(run, "after the workers", tensor, trainer);
  expect_memory_on(run, "after the workers", {trainer});
  expect_contexts(run, "after the workers", {trainer});
}

}  // namespace

TEST_CASE("the scenario: under CUDA_VISIBLE_DEVICES=4,5,6,7 three workers work on GPUs 5, 6 and 7, the trainer on 4",
          "[lesson19]") {
  const Env env = {{"CUDA_VISIBLE_DEVICES", "4,5,6,7"}};
  GPULAB_REQUIRE_GPUS(gpus_needed(env), env);
  check_workers(env, {}, {5, 6, 7}, 4);
}

TEST_CASE("other worker counts, lists and nodes: worker w on the visible GPU w + 1", "[lesson19]") {
  SECTION("CUDA_VISIBLE_DEVICES=2,0,5, two workers: on GPUs 0 and 5, the trainer on 2") {
    const Env env = {{"CUDA_VISIBLE_DEVICES", "2,0,5"}};
    GPULAB_REQUIRE_GPUS(gpus_needed(env), env);
    check_workers(env, {"--workers", "2"}, physical_of_entries({0, 5}), physical_of_entries({2}).at(0));
  }
  SECTION("nothing set, one worker: on GPU 1, the trainer on 0") {
    GPULAB_REQUIRE_GPUS(2, Env{});
    const auto order = cuda_order();
    check_workers({}, {"--workers", "1"}, {order.at(1)}, order.at(0));
  }
  SECTION("another node: GPULAB_NODE=tiny2, one worker: on GPU 1, the trainer on 0") {
    GPULAB_REQUIRE_SIMULATED_NODE("this scenario needs the simulated node tiny2");
    const Env env = {{"GPULAB_NODE", "tiny2"}};
    const auto order = cuda_order(env);
    check_workers(env, {"--workers", "1"}, {order.at(1)}, order.at(0));
  }
}

TEST_CASE("stretch: --worker-gpus names each worker's GPU as nvidia-smi numbers it", "[lesson19][stretch]") {
  SECTION("CUDA_VISIBLE_DEVICES=4,5,6,7 --worker-gpus 7,6: the workers on GPUs 7 and 6") {
    const Env env = {{"CUDA_VISIBLE_DEVICES", "4,5,6,7"}};
    GPULAB_REQUIRE_GPUS(gpus_needed(env), env);
    check_workers(env, {"--workers", "2", "--worker-gpus", "7,6"}, {7, 6}, 4);
  }
  SECTION("CUDA_VISIBLE_DEVICES=3,2 --worker-gpus 1,0: GPUs outside the trainer's list") {
    const Env env = {{"CUDA_VISIBLE_DEVICES", "3,2"}};
    GPULAB_REQUIRE_GPUS(4, env);
    check_workers(env, {"--workers", "2", "--worker-gpus", "1,0"}, {1, 0}, physical_of_entries({3}).at(0));
  }
  SECTION("GPULAB_NODE=workstation-mixed CUDA_VISIBLE_DEVICES=3 --worker-gpus 0,1: nvidia-smi's numbers, not CUDA's order") {
    // CUDA's default order there puts the RTX 4090, nvidia-smi's GPU 1, first: a worker's
    // CUDA_VISIBLE_DEVICES=0 without CUDA_DEVICE_ORDER=PCI_BUS_ID lands on GPU 1.
    GPULAB_REQUIRE_SIMULATED_NODE("this scenario needs the simulated node workstation-mixed");
    const Env env = {{"GPULAB_NODE", "workstation-mixed"}, {"CUDA_VISIBLE_DEVICES", "3"}};
    check_workers(env, {"--workers", "2", "--worker-gpus", "0,1"}, {0, 1}, physical_of_entries({3}, env).at(0));
  }
  SECTION("GPULAB_NODE=workstation-mixed CUDA_VISIBLE_DEVICES=0 --worker-gpus 2,3: the trainer's list still in CUDA's order") {
    // The workers' numbers are nvidia-smi's; the trainer's own CUDA_VISIBLE_DEVICES=0 stays
    // CUDA's: its cuda:0 is CUDA's first GPU (the RTX 4090, GPU 1), not nvidia-smi's GPU 0.
    GPULAB_REQUIRE_SIMULATED_NODE("this scenario needs the simulated node workstation-mixed");
    const Env env = {{"GPULAB_NODE", "workstation-mixed"}, {"CUDA_VISIBLE_DEVICES", "0"}};
    check_workers(env, {"--workers", "2", "--worker-gpus", "2,3"}, {2, 3}, physical_of_entries({0}, env).at(0));
  }
}

// Generated: worker counts under drawn lists and nodes; where the trainer's tensors are, where
// nvidia-smi listed each worker (the library's observation) and how many finished, as the
// reference solution.
TEST_CASE("generated scenarios: worker counts under drawn lists", "[lesson19]") {
  Family family;
  family.lesson = "19";
  family.what = "--workers under CUDA_VISIBLE_DEVICES lists";
  family.count = 6;
  family.facts = {"workers_finished", "worker0_gpus", "worker1_gpus", "worker2_gpus"};
  family.draw = [](Rng& rng) {
    Place place = draw_place(rng, {"dgx-a100", "tiny2", "aws-p4d"}, 2.0 / 3, /*repeats=*/false);
    Drawn& drawn = place.drawn;
    drawn.args = {"--workers", std::to_string(std::max(1, std::min(3, draw_int(rng, 1, std::max(1, place.visible - 1)))))};
    return drawn;
  };
  check_against_reference(family);
}
