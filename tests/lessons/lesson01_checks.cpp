// Lesson 01: nvidia-smi counts physical GPUs, CUDA counts visible ones; x lands on the first
// visible GPU, and with none visible the program falls back to the CPU and says so (claims
// A1.2, A3.3). Expectations come from each scenario's node and CUDA_VISIBLE_DEVICES.
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "expect.h"
#include "generated.h"
#include "gpu_requirements.h"
#include "lesson_run.h"

using namespace gpulab::test;

namespace {

void require_ran_to_end(const LessonRun& run) {
  const auto uncaught = run.errors("uncaught");
  require_that(run.process.exit_code == 0 && uncaught.empty(), "the program runs to its end",
               "it stopped with an error: " + (uncaught.empty() ? run.process.err : uncaught.front()));
}

// `visible`: the physical GPUs CUDA shows the process, in CUDA's numbering.
void check_first_gpu(const Env& env, const std::vector<int>& visible) {
  INFO("scenario: " << shown(env));
  const auto run = run_scenario("01", env);
  require_ran_to_end(run);
  expect_equal("the GPUs nvidia-smi counts (physical_gpus)", run.fact("physical_gpus"),
               static_cast<std::int64_t>(physical_gpus(env)));
  expect_equal("torch::cuda::device_count()", run.fact("visible_devices"), static_cast<std::int64_t>(visible.size()));
  const int first = visible.front();
  INFO("the first GPU this process may use, cuda:0, is physical GPU " << first);
  expect_on_gpu(run, "after creating a tensor", "x", first);
  expect_contexts(run, "after creating a tensor", {first});
}

void check_no_gpu(const Env& env) {
  INFO("scenario: " << shown(env) << "— CUDA shows this process no GPU");
  const auto run = run_scenario("01", env);
  require_ran_to_end(run);
  expect_equal("the GPUs nvidia-smi counts (physical_gpus)", run.fact("physical_gpus"),
               static_cast<std::int64_t>(physical_gpus(env)));
  expect_equal("torch::cuda::device_count()", run.fact("visible_devices"), 0);
  expect_on_gpu(run, "after creating a tensor", "x", -1);
  expect_memory_on(run, "after creating a tensor", {});
  // The explanation goes to stderr next to the JSON report: it must name the fallback.
  expect_that(Catch::Contains("CPU", Catch::CaseSensitive::No).match(run.process.err),
              "a message that the program falls back to the CPU",
              run.process.err.empty() ? "no message" : "the output \"" + run.process.err + "\"");
}

}  // namespace

TEST_CASE("on the default node every physical GPU is visible and x lands on the first", "[lesson01]") {
  GPULAB_REQUIRE_GPUS(1, Env{});  // every GPU there is: the node's on the simulator
  check_first_gpu({}, cuda_order());  // physical GPU 0 where the GPUs are alike
}

TEST_CASE("another node: the counts follow its node file, and x its first visible GPU", "[lesson01]") {
  GPULAB_REQUIRE_GPUS(1, Env{});
  // Real GPUs ignore GPULAB_NODE: there the machine is checked once, above.
  if (!simulated()) return;
  for (const std::string name : {"tiny2", "workstation-mixed"}) {
    const Env env = {{"GPULAB_NODE", name}};
    check_first_gpu(env, cuda_order(env));  // workstation-mixed: cuda:0 is the RTX 4090, GPU 1
  }
}

TEST_CASE("a list of GPUs: x lands on the first listed GPU, whichever that is", "[lesson01]") {
  SECTION("CUDA_VISIBLE_DEVICES=6,7") {
    const Env env = {{"CUDA_VISIBLE_DEVICES", "6,7"}};
    GPULAB_REQUIRE_GPUS(gpus_needed(env), env);
    check_first_gpu(env, physical_of_entries({6, 7}));
  }
  SECTION("one GPU: CUDA_VISIBLE_DEVICES=3") {
    const Env env = {{"CUDA_VISIBLE_DEVICES", "3"}};
    GPULAB_REQUIRE_GPUS(gpus_needed(env), env);
    check_first_gpu(env, physical_of_entries({3}));
  }
  SECTION("one GPU of another node: GPULAB_NODE=tiny2 CUDA_VISIBLE_DEVICES=1") {
    const Env env = {{"GPULAB_NODE", "tiny2"}, {"CUDA_VISIBLE_DEVICES", "1"}};
    GPULAB_REQUIRE_GPUS(gpus_needed(env), env);
    if (simulated()) check_first_gpu(env, physical_of_entries({1}, env));
  }
}

TEST_CASE("when CUDA_VISIBLE_DEVICES hides every GPU the program runs on the CPU, saying why", "[lesson01]") {
  SECTION("set but empty: CUDA_VISIBLE_DEVICES=") {
    const Env env = {{"CUDA_VISIBLE_DEVICES", ""}};
    GPULAB_REQUIRE_GPUS(gpus_needed(env), env);
    check_no_gpu(env);
  }
  SECTION("an invalid first entry ends the list: CUDA_VISIBLE_DEVICES=-1") {
    const Env env = {{"CUDA_VISIBLE_DEVICES", "-1"}};
    GPULAB_REQUIRE_GPUS(1, env);
    check_no_gpu(env);
  }
  SECTION("an index past the last GPU ends the list: CUDA_VISIBLE_DEVICES=<the GPU count>") {
    GPULAB_REQUIRE_GPUS(1, Env{});
    check_no_gpu({{"CUDA_VISIBLE_DEVICES", std::to_string(physical_gpus())}});
  }
}

// The stretch: y on the visible GPU with the most memory (the lowest CUDA index on a tie).
namespace {
void check_roomiest(const Env& env, const std::vector<int>& visible) {
  INFO("scenario: " << shown(env));
  const auto run = run_scenario("01", env);
  require_ran_to_end(run);
  int roomiest = -1;
  std::uint64_t most = 0;
  std::string sizes;
  const auto gpus_of_node = node(gpu_inventory(env).node).gpus;
  for (const int gpu : visible) {
    const auto capacity = gpus_of_node.at(static_cast<std::size_t>(gpu)).capacity_bytes;
    sizes += (sizes.empty() ? "" : ", ") + std::string("GPU ") + std::to_string(gpu) + " " + mib(capacity);
    if (roomiest < 0 || capacity > most) {
      roomiest = gpu;
      most = capacity;
    }
  }
  INFO("the visible GPUs in CUDA's numbering, with the memory CUDA reports: " << (sizes.empty() ? "none" : sizes));
  expect_on_gpu(run, "after creating y", "y", roomiest);
}
}  // namespace

TEST_CASE("stretch: y lands on the visible GPU with the most memory", "[lesson01][stretch]") {
  GPULAB_REQUIRE_SIMULATED_NODE("the stretch checks compare with the node files' memory: simulated node only");
  const Env mixed = {{"GPULAB_NODE", "workstation-mixed"}};
  SECTION("workstation-mixed, every GPU visible") { check_roomiest(mixed, cuda_order(mixed)); }
  SECTION("workstation-mixed, CUDA_VISIBLE_DEVICES=0,3") {
    check_roomiest({mixed.front(), {"CUDA_VISIBLE_DEVICES", "0,3"}}, physical_of_entries({0, 3}, mixed));
  }
  SECTION("workstation-mixed, CUDA_VISIBLE_DEVICES=3,0,2") {
    check_roomiest({mixed.front(), {"CUDA_VISIBLE_DEVICES", "3,0,2"}}, physical_of_entries({3, 0, 2}, mixed));
  }
  SECTION("alike GPUs, CUDA_VISIBLE_DEVICES=5,2: a tie, so cuda:0") {
    check_roomiest({{"CUDA_VISIBLE_DEVICES", "5,2"}}, physical_of_entries({5, 2}));
  }
  SECTION("no GPU visible: the CPU") { check_roomiest({{"CUDA_VISIBLE_DEVICES", ""}}, {}); }
}

// Generated: any node, any list CUDA may be given, judged against the reference solution:
// x where it puts it, the counts it reports, and the CPU message exactly when it gives one.
TEST_CASE("generated scenarios: every node and every kind of CUDA_VISIBLE_DEVICES list", "[lesson01]") {
  Family family;
  family.lesson = "01";
  family.what = "nodes and CUDA_VISIBLE_DEVICES lists of every kind";
  family.count = 16;
  family.labels = {"after creating a tensor"};  // y is the stretch's
  family.facts = {"physical_gpus", "visible_devices"};
  family.said = {"CPU"};
  family.draw = [](Rng& rng) {
    const std::string name = draw_one(rng, simulated_nodes());
    Drawn drawn;
    drawn.env = {{"GPULAB_NODE", name}};
    if (draw_int(rng, 0, 3) != 0) drawn.env.emplace_back("CUDA_VISIBLE_DEVICES", draw_visible_list(rng, name, every_kind()));
    if (draw_int(rng, 0, 2) == 0) drawn.env.emplace_back("CUDA_DEVICE_ORDER", draw_one(rng, {"PCI_BUS_ID", "FASTEST_FIRST"}));
    return drawn;
  };
  check_against_reference(family);
}
