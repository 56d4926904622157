// Lesson 12: reordering CUDA_VISIBLE_DEVICES chooses DataParallel's primary (claim A5.2).
// With device_ids omitted the first listed GPU holds the model and the output; the others
// get replicas. The learner writes the environment for given physical GPUs.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "expect.h"
#include "generated.h"
#include "gpu_requirements.h"
#include "lesson_run.h"

using namespace gpulab::test;

namespace {

std::string join(const std::vector<int>& ids) {
  std::string text;
  for (int id : ids) text += (text.empty() ? "" : ",") + std::to_string(id);
  return text;
}

// The program ran DataParallel on exactly `primary` + `others` (physical), `primary` first.
void check_run(const LessonRun& run, int primary, const std::vector<int>& others,
               const std::string& node_name = "dgx-a100") {
  require_no_errors(run, "the program runs");
  expect_equal("the number of GPUs CUDA sees", run.fact("device_count"), static_cast<int>(others.size()) + 1);
  std::set<int> expected(others.begin(), others.end());
  expected.insert(primary);
  expect_contexts(run, "after backward", expected);
  {
    INFO("the primary, cuda:0, holds the model and the gathered output");
    expect_on_gpu(run, "after backward", "weight", primary);
    expect_on_gpu(run, "after backward", "output", primary);
  }
  // Replicas ran on the others: memory there beyond a context.
  INFO("the replicas ran on the other GPUs: memory beyond a CUDA context there");
  const auto used = run.usage("after backward");
  for (int gpu : others) {
    const std::string where = "physical GPU " + std::to_string(gpu);
    require_that(used.count(gpu) == 1, "memory on " + where + " (after backward)", "none there");
    const std::uint64_t context = simulated() ? node(node_name).gpus[static_cast<std::size_t>(gpu)].context_bytes : 0;
    expect_that(used.at(gpu) > context,
                (context > 0 ? "more than a CUDA context's " + mib(context) : std::string("memory in use")) + " on " +
                    where + " (after backward)",
                mib(used.at(gpu)) + " there");
  }
}

void check_choice(const Env& env, int primary, const std::vector<int>& others, const std::string& node_name) {
  GPULAB_REQUIRE_GPUS(std::max(primary, *std::max_element(others.begin(), others.end())) + 1, env);
  const auto run = run_scenario("12", env, {"--primary", std::to_string(primary), "--others", join(others)});
  check_run(run, primary, others, node_name);
}

}  // namespace

TEST_CASE("the article's CUDA_VISIBLE_DEVICES=2,1,3: the model on physical GPU 2, replicas on 1 and 3", "[lesson12]") {
  const Env env{{"CUDA_VISIBLE_DEVICES", "2,1,3"}};
  GPULAB_REQUIRE_GPUS(gpus_needed(env), env);
  const auto order = cuda_order(env);  // integer entries count CUDA's order
  check_run(run_scenario("12", env), order[2], {order[1], order[3]});
}

TEST_CASE("physical GPU 5 as the primary, with 1 and 6", "[lesson12]") { check_choice({}, 5, {1, 6}, "dgx-a100"); }

TEST_CASE("physical GPU 0 as the primary, with 7 and 3", "[lesson12]") { check_choice({}, 0, {7, 3}, "dgx-a100"); }

TEST_CASE("the program's choice wins over CUDA_VISIBLE_DEVICES=0,1 from the shell", "[lesson12]") {
  check_choice({{"CUDA_VISIBLE_DEVICES", "0,1"}}, 4, {6}, "dgx-a100");
}

TEST_CASE("on workstation-mixed, nvidia-smi's GPU 2 as the primary with 0 and 3: CUDA's own order differs there",
          "[lesson12]") {
  check_choice({{"GPULAB_NODE", "workstation-mixed"}}, 2, {0, 3}, "workstation-mixed");
}

TEST_CASE("on workstation-mixed, the program's choice wins over a shell's CUDA_DEVICE_ORDER=FASTEST_FIRST too: "
          "nvidia-smi's GPU 1 as the primary with 3 and 0",
          "[lesson12]") {
  check_choice({{"GPULAB_NODE", "workstation-mixed"}, {"CUDA_DEVICE_ORDER", "FASTEST_FIRST"}}, 1, {3, 0},
               "workstation-mixed");
}

// The stretch: --others may repeat a GPU or name the primary again. CUDA makes a list with a
// repeated entry empty, so the program must list each GPU once.
TEST_CASE("stretch: --primary 5 --others 1,5,6,1: DataParallel on physical GPUs 5, 1 and 6, each once",
          "[lesson12][stretch]") {
  GPULAB_REQUIRE_GPUS(7, Env{});
  const auto run = run_scenario("12", {}, {"--primary", "5", "--others", "1,5,6,1"});
  INFO("CUDA_VISIBLE_DEVICES with a repeated entry hides every GPU: list 5,1,6");
  check_run(run, 5, {1, 6});
}

TEST_CASE("stretch: on workstation-mixed, --primary 3 --others 3,0: physical GPUs 3 and 0", "[lesson12][stretch]") {
  const Env env{{"GPULAB_NODE", "workstation-mixed"}};
  GPULAB_REQUIRE_GPUS(4, env);
  const auto run = run_scenario("12", env, {"--primary", "3", "--others", "3,0"});
  check_run(run, 3, {0}, "workstation-mixed");
}

// Generated: a primary and other GPUs of any node, under whatever list the environment had;
// DataParallel's GPUs and primary, as the reference solution's.
TEST_CASE("generated scenarios: a drawn primary and others under a drawn environment", "[lesson12]") {
  Family family;
  family.lesson = "12";
  family.what = "--primary and --others (distinct) on drawn nodes and lists";
  family.count = 8;  // each run trains DataParallel
  family.draw = [](Rng& rng) {
    const std::string name = draw_one(rng, {"dgx-a100", "workstation-mixed", "pascal-rig", "aws-p4d"});
    const int count = static_cast<int>(node(name).gpus.size());
    Drawn drawn;
    drawn.env = {{"GPULAB_NODE", name}};
    if (draw_int(rng, 0, 1) == 0) drawn.env.emplace_back("CUDA_VISIBLE_DEVICES", draw_list_with_gpus(rng, name, ListKinds{}, 3));
    if (draw_int(rng, 0, 2) == 0) drawn.env.emplace_back("CUDA_DEVICE_ORDER", draw_one(rng, {"PCI_BUS_ID", "FASTEST_FIRST"}));
    std::vector<int> gpus(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) gpus[static_cast<std::size_t>(i)] = i;
    std::shuffle(gpus.begin(), gpus.end(), rng);
    std::string others;
    for (int i = 1; i <= draw_int(rng, 1, std::min(3, count - 1)); ++i) others += (others.empty() ? "" : ",") + std::to_string(gpus[static_cast<std::size_t>(i)]);
    drawn.args = {"--primary", std::to_string(gpus[0]), "--others", others};
    return drawn;
  };
  check_against_reference(family);
}
