// Lesson 16: a checkpoint saved from cuda:3 on the 8-GPU node. Loaded into a CPU module on
// the saving machine, torch::load moves the parameters to the saved device (its README explains why);
// on tiny2 (2 GPUs) the naive load fails with the real error, and the learner's load must
// put the weights on the GPU --device names. Each step is its own process, as on two machines.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "expect.h"
#include "gpu_requirements.h"
#include "lesson_run.h"

using namespace gpulab::test;

namespace {

struct Scenario {
  Env env;  // the loading machine
  std::string device;
  int physical;  // the physical GPU --device is there
  bool has_cuda_3 = false;  // the loading machine's CUDA sees a cuda:3, so the naive load succeeds
};

void check(const Scenario& scenario) {
  const Env saving = {{"GPULAB_NODE", "dgx-a100"}};
  GPULAB_REQUIRE_GPUS(4, saving);
  const std::string file = fresh_state_dir() + "/checkpoint.pt";
  const auto save = run_scenario("16", saving, {"--save", file});
  require_no_errors(save, "the save step");
  const int saved_on = cuda_order(saving).at(3);
  expect_on_gpu(save, "saved", "weight", saved_on);
  {
    INFO("torch::load into a module moves its parameters to the device the checkpoint names");
    expect_on_gpu(save, "loaded on the saving machine", "weight", saved_on);
    expect_on_gpu(save, "loaded on the saving machine", "bias", saved_on);
  }

  const auto load = run_scenario("16", scenario.env, {"--load", file, "--device", scenario.device});
  const auto naive = load.errors("naive load");
  if (scenario.has_cuda_3)
    expect_that(naive.empty(), "the naive load succeeds (this machine has a cuda:3)",
                naive.empty() ? "" : "'" + naive.front().substr(0, naive.front().find('\n')) + "'");
  else
    expect_that(naive.size() == 1 && naive.front().find("invalid device ordinal") != std::string::npos,
                "the naive load fails with 'CUDA error: invalid device ordinal' (no cuda:3 here)",
                naive.empty() ? "it did not fail" : "'" + naive.front().substr(0, naive.front().find('\n')) + "'");
  const auto uncaught = load.errors("uncaught");
  require_that(uncaught.empty(), "your load succeeds",
               uncaught.empty() ? "" : "'" + uncaught.front().substr(0, uncaught.front().find('\n')) + "'");
  INFO("--device " << scenario.device << " is physical GPU " << scenario.physical << " on the loading machine");
  expect_on_gpu(load, "loaded", "weight", scenario.physical);
  expect_on_gpu(load, "loaded", "bias", scenario.physical);
}

}  // namespace

TEST_CASE("the lesson's scenario: saved from cuda:3 of dgx-a100, loaded on tiny2 to cuda:1 (physical GPU 1)",
          "[lesson16]") {
  check({{{"GPULAB_NODE", "tiny2"}}, "cuda:1", 1});
}

TEST_CASE("loaded on tiny2 under CUDA_VISIBLE_DEVICES=1 to cuda:0: physical GPU 1", "[lesson16]") {
  check({{{"GPULAB_NODE", "tiny2"}, {"CUDA_VISIBLE_DEVICES", "1"}}, "cuda:0", 1});
}

TEST_CASE("loaded on dgx-a100 under CUDA_VISIBLE_DEVICES=5 to cuda:0: physical GPU 5", "[lesson16]") {
  check({{{"GPULAB_NODE", "dgx-a100"}, {"CUDA_VISIBLE_DEVICES", "5"}}, "cuda:0", 5});
}

TEST_CASE("loaded on dgx-a100 under CUDA_VISIBLE_DEVICES=4,5,6,7 to cuda:1: physical GPU 5, though this machine has "
          "a cuda:3 (physical GPU 7) where a plain load would put the weights",
          "[lesson16]") {
  check({{{"GPULAB_NODE", "dgx-a100"}, {"CUDA_VISIBLE_DEVICES", "4,5,6,7"}}, "cuda:1", 5, true});
}

// A loading machine that has no GPU --device names: nothing to choose for the learner, so the
// load must fail, loudly, rather than put the weights on the CPU or another GPU.
TEST_CASE("loaded on tiny2 under CUDA_VISIBLE_DEVICES=1 to cuda:1, which this machine does not have: the load fails",
          "[lesson16]") {
  const Env saving = {{"GPULAB_NODE", "dgx-a100"}};
  GPULAB_REQUIRE_GPUS(4, saving);
  const std::string file = fresh_state_dir() + "/checkpoint.pt";
  require_no_errors(run_scenario("16", saving, {"--save", file}), "the save step");
  const Env loading = {{"GPULAB_NODE", "tiny2"}, {"CUDA_VISIBLE_DEVICES", "1"}};
  const auto load = run_scenario("16", loading, {"--load", file, "--device", "cuda:1"});
  INFO("scenario: " << shown(loading) << "lesson-16 --load checkpoint.pt --device cuda:1 (this process sees one GPU, cuda:0)");
  const auto uncaught = load.errors("uncaught");
  std::string placed;
  for (const auto& o : load.report.at("observations"))
    if (o.at("label") == "loaded")
      for (const auto& t : o.at("tensors")) placed += " " + t.value("name", "") + " on " + t.value("device", "");
  expect_that(!uncaught.empty() && placed.empty(), "the load fails with an error, and no weight lands anywhere",
              uncaught.empty() ? "no error; the weights loaded:" + placed : "the weights loaded:" + placed);
}

// The stretch: on a machine where CUDA sees no GPU, the load succeeds with the weights on the CPU.
TEST_CASE("stretch: saved from cuda:3 of dgx-a100, loaded where CUDA_VISIBLE_DEVICES=\"\" hides every GPU: the "
          "weights on the CPU, no GPU used",
          "[lesson16][stretch]") {
  const Env saving = {{"GPULAB_NODE", "dgx-a100"}};
  GPULAB_REQUIRE_GPUS(4, saving);
  const std::string file = fresh_state_dir() + "/checkpoint.pt";
  require_no_errors(run_scenario("16", saving, {"--save", file}), "the save step");

  Env loading = {{"GPULAB_NODE", "tiny2"}, {"CUDA_VISIBLE_DEVICES", ""}};
  SECTION("CUDA_VISIBLE_DEVICES=\"\"") {}
  SECTION("CUDA_VISIBLE_DEVICES=-1, an invalid first entry") { loading.back().second = "-1"; }
  const auto load = run_scenario("16", loading, {"--load", file, "--device", "cuda:1"});
  const auto uncaught = load.errors("uncaught");
  require_that(uncaught.empty(), "your load succeeds on a machine with no GPU",
               uncaught.empty() ? "" : "'" + uncaught.front().substr(0, uncaught.front().find('\n')) + "'");
  INFO("with no GPU visible, the CPU is the only place the weights can go");
  expect_on_gpu(load, "loaded", "weight", -1);
  expect_on_gpu(load, "loaded", "bias", -1);
  expect_contexts(load, "loaded", {});
}
