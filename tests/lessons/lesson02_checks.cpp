// Lesson 02: CUDA_VISIBLE_DEVICES renumbers the listed GPUs 0..n-1 in list order, so cuda:i
// is the i-th listed physical GPU (claims A1.2, A2.6).
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "expect.h"
#include "gpu_requirements.h"
#include "lesson_run.h"

using namespace gpulab::test;

namespace {
// Runs the lesson under `env`; checks it used every visible GPU and that cuda:i is listed[i].
void check_renumbering(const Env& env, const std::vector<int>& listed) {
  const auto run = run_lesson("02", env);
  const auto uncaught = run.errors("uncaught");
  expect_that(run.process.exit_code == 0 && uncaught.empty(), "the program runs to its end",
              "it stopped (exit code " + std::to_string(run.process.exit_code) + ")" +
                  (uncaught.empty() ? std::string() : " with the error \"" + uncaught.front() + "\""));
  expect_equal("the GPUs the program used (device_count)", run.fact("device_count"), listed.size());
  for (std::size_t i = 0; i < listed.size(); ++i) {
    expect_on_gpu(run, "x on cuda:" + std::to_string(i), "x", listed[i]);
  }
  // nvidia-smi shows this process on the listed GPUs and nowhere else.
  expect_memory_on(run, "x on cuda:" + std::to_string(listed.size() - 1), std::set<int>(listed.begin(), listed.end()));
}

// The physical GPUs an integer CUDA_VISIBLE_DEVICES list names, in list order. On the default
// node (and on alike real GPUs) entry i is physical GPU i; CUDA counts in its own order.
std::vector<int> physical_of_entries(const std::vector<int>& entries) {
  const auto order = cuda_order();
  std::vector<int> physical;
  for (const int entry : entries) physical.push_back(order.at(static_cast<std::size_t>(entry)));
  return physical;
}
}  // namespace

TEST_CASE("under CUDA_VISIBLE_DEVICES=2,3,4,5 the process sees 4 GPUs and cuda:i is physical GPU 2+i",
          "[lesson02]") {
  const Env env = {{"CUDA_VISIBLE_DEVICES", "2,3,4,5"}};
  GPULAB_REQUIRE_GPUS(gpus_needed(env), env);
  check_renumbering(env, physical_of_entries({2, 3, 4, 5}));
}

TEST_CASE("visible GPUs are numbered in list order, not in physical order", "[lesson02]") {
  const Env env = {{"CUDA_VISIBLE_DEVICES", "5,1,6"}};
  GPULAB_REQUIRE_GPUS(gpus_needed(env), env);
  check_renumbering(env, physical_of_entries({5, 1, 6}));
}

TEST_CASE("with CUDA_VISIBLE_DEVICES unset cuda:i is physical GPU i, for every GPU of the node", "[lesson02]") {
  GPULAB_REQUIRE_GPUS(1, Env{});  // every GPU there is; every node has some
  // Real GPUs ignore GPULAB_NODE: there the machine's GPUs are checked once.
  const std::vector<std::string> nodes =
      simulated() ? std::vector<std::string>{"dgx-a100", "tiny2"} : std::vector<std::string>{"dgx-a100"};
  for (const std::string& name : nodes) {
    INFO("node " << name);
    const Env env = {{"GPULAB_NODE", name}};
    check_renumbering(env, cuda_order(env));  // 0, 1, ... where the GPUs are alike
  }
}
