// Lesson 18: the model is placed on a GPU chosen at run time (--device). The training step
// must follow it: batch, target, mask and loss on the model's physical GPU, no memory
// anywhere else, whatever --device, CUDA_VISIBLE_DEVICES and the node. As shipped the data
// goes to an index-less torch::kCUDA (the current device, cuda:0) and the mask stays on the
// CPU, so a CUDA op raises "Expected all tensors to be on the same device".
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

// `physical`: the physical GPU behind --device in this scenario; -1 for the CPU.
void check_step_follows_model(const Env& env, const std::string& device, int physical) {
  INFO("scenario: " << shown(env) << "lesson-18 --device " << device << " (the model "
                    << placement(physical) << ")");
  const auto run = run_scenario("18", env, {"--device", device});
  require_no_errors(run, "the training step runs where the model is");
  for (const char* tensor : {"batch", "target", "mask"}) expect_on_gpu(run, "data ready", tensor, physical);
  for (const char* tensor : {"weight", "batch", "loss"}) expect_on_gpu(run, "after training", tensor, physical);
  const std::set<int> only = physical < 0 ? std::set<int>{} : std::set<int>{physical};
  expect_memory_on(run, "data ready", only);
  expect_memory_on(run, "after training", only);
  expect_contexts(run, "after training", only);
}

void check_list(const std::string& list, const std::vector<int>& entries, const std::string& device, int index) {
  const Env env = {{"CUDA_VISIBLE_DEVICES", list}};
  GPULAB_REQUIRE_GPUS(gpus_needed(env), env);
  check_step_follows_model(env, device, physical_of_entries(entries).at(static_cast<std::size_t>(index)));
}

}  // namespace

TEST_CASE("the lesson's scenario: under CUDA_VISIBLE_DEVICES=2,3 with --device cuda:1 the step runs on physical GPU 3",
          "[lesson18]") {
  check_list("2,3", {2, 3}, "cuda:1", 1);
}

TEST_CASE("the model on cuda:0 with every GPU visible: the step runs on physical GPU 0 only", "[lesson18]") {
  GPULAB_REQUIRE_GPUS(1, Env{});
  check_step_follows_model({}, "cuda:0", cuda_order().at(0));
}

TEST_CASE("under CUDA_VISIBLE_DEVICES=6,4,5 with --device cuda:2 the step runs on physical GPU 5", "[lesson18]") {
  check_list("6,4,5", {6, 4, 5}, "cuda:2", 2);
}

TEST_CASE("another node: on tiny2 with --device cuda:1 the step runs on its physical GPU 1", "[lesson18]") {
  const Env env = {{"GPULAB_NODE", "tiny2"}};
  GPULAB_REQUIRE_GPUS(2, env);
  check_step_follows_model(env, "cuda:1", cuda_order(env).at(1));
}

TEST_CASE("--device cuda, no index: the model on the current GPU, cuda:0, under CUDA_VISIBLE_DEVICES=5,1", "[lesson18]") {
  check_list("5,1", {5, 1}, "cuda", 0);
}

// The stretch: the same code with the model on the CPU trains there and touches no GPU.
TEST_CASE("stretch: with --device cpu the step trains on the CPU and no GPU gets a context", "[lesson18][stretch]") {
  const Env env = {{"CUDA_VISIBLE_DEVICES", "2,3"}};
  GPULAB_REQUIRE_GPUS(gpus_needed(env), env);
  check_step_follows_model(env, "cpu", -1);
}

// Generated: --device cuda:K or the index-less cuda under drawn lists; where the step's
// tensors land and which GPUs hold memory, as the reference solution.
TEST_CASE("generated scenarios: --device strings under drawn lists", "[lesson18]") {
  Family family;
  family.lesson = "18";
  family.what = "--device cuda:K and cuda under CUDA_VISIBLE_DEVICES lists";
  family.count = 10;
  family.draw = [](Rng& rng) {
    Place place = draw_place(rng, {"dgx-a100", "tiny2"}, 2.0 / 3);
    Drawn& drawn = place.drawn;
    drawn.args = {"--device", draw_int(rng, 0, 4) == 0 ? std::string("cuda") : "cuda:" + std::to_string(draw_int(rng, 0, place.visible - 1))};
    return drawn;
  };
  check_against_reference(family);
}
