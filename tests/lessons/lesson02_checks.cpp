// Lesson 02: CUDA_VISIBLE_DEVICES renumbers the listed GPUs 0..n-1 in list order, so cuda:i
// is the i-th listed GPU (claims A1.2, A2.6). The program puts x on every visible GPU and
// names, for each cuda:i, nvidia-smi's number; the checks compare that with where
// nvidia-smi sees each x, and both with what the scenario's list and node imply.
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

std::string joined(const std::vector<int>& numbers) {
  std::string text;
  for (const int n : numbers) text += (text.empty() ? "" : ",") + std::to_string(n);
  return text;
}

// Runs the lesson under `env`; `expected[i]` is the physical GPU behind cuda:i.
void check_numbers(const Env& env, const std::vector<int>& expected) {
  INFO("scenario: " << shown(env) << "\nthe GPUs this process can see, as nvidia-smi numbers them, in CUDA's order: "
                    << joined(expected));
  const auto run = run_scenario("02", env);
  const auto uncaught = run.errors("uncaught");
  require_that(run.process.exit_code == 0 && uncaught.empty(), "the program runs to its end",
               "it stopped (exit code " + std::to_string(run.process.exit_code) + ")" +
                   (uncaught.empty() ? std::string() : " with the error \"" + uncaught.front() + "\""));

  // Where nvidia-smi sees each x: one per visible GPU, and nothing beyond them.
  std::vector<int> observed;
  for (const auto& observation : run.report.at("observations")) {
    const std::string label = observation.value("label", "");
    if (label.rfind("x on cuda:", 0) == 0) observed.push_back(run.physical_of(label, "x"));
  }
  expect_that(observed == expected, "x on nvidia-smi's GPUs " + joined(expected) + " (x on cuda:0, cuda:1, ...)",
              observed.empty() ? std::string("no x observed") : "x on GPUs " + joined(observed));
  if (!expected.empty())
    expect_memory_on(run, "x on cuda:" + std::to_string(expected.size() - 1), std::set<int>(expected.begin(), expected.end()));

  const auto& facts = run.report.at("facts");
  require_that(facts.contains("nvidia_smi_numbers") && facts.at("nvidia_smi_numbers").is_string(),
               "the fact nvidia_smi_numbers (a string such as \"2,3,4,5\")",
               facts.contains("nvidia_smi_numbers") ? facts.at("nvidia_smi_numbers").dump() : "no such fact");
  const std::string claimed = facts.at("nvidia_smi_numbers").get<std::string>();
  expect_that(claimed == joined(observed) && claimed == joined(expected),
              "nvidia_smi_numbers = \"" + joined(expected) + "\" (where nvidia-smi sees each x)",
              "nvidia_smi_numbers = \"" + claimed + "\"");
}

}  // namespace

TEST_CASE("under CUDA_VISIBLE_DEVICES=2,3,4,5 the process sees 4 GPUs and cuda:i is physical GPU 2+i", "[lesson02]") {
  const Env env = {{"CUDA_VISIBLE_DEVICES", "2,3,4,5"}};
  GPULAB_REQUIRE_GPUS(gpus_needed(env), env);
  check_numbers(env, physical_of_entries({2, 3, 4, 5}));
}

TEST_CASE("visible GPUs are numbered in list order, not in physical order", "[lesson02]") {
  SECTION("CUDA_VISIBLE_DEVICES=5,1,6") {
    const Env env = {{"CUDA_VISIBLE_DEVICES", "5,1,6"}};
    GPULAB_REQUIRE_GPUS(gpus_needed(env), env);
    check_numbers(env, physical_of_entries({5, 1, 6}));
  }
  SECTION("CUDA_VISIBLE_DEVICES=7,0,3") {
    const Env env = {{"CUDA_VISIBLE_DEVICES", "7,0,3"}};
    GPULAB_REQUIRE_GPUS(gpus_needed(env), env);
    check_numbers(env, physical_of_entries({7, 0, 3}));
  }
  SECTION("another node: GPULAB_NODE=tiny2 CUDA_VISIBLE_DEVICES=1") {
    const Env env = {{"GPULAB_NODE", "tiny2"}, {"CUDA_VISIBLE_DEVICES", "1"}};
    GPULAB_REQUIRE_GPUS(gpus_needed(env), env);
    if (simulated()) check_numbers(env, physical_of_entries({1}, env));
  }
}

TEST_CASE("an index past the last GPU ends the list: a tensor on every GPU CUDA shows, and no more", "[lesson02]") {
  SECTION("CUDA_VISIBLE_DEVICES=5,1,<the GPU count>,0: CUDA shows GPUs 5 and 1 only") {
    GPULAB_REQUIRE_GPUS(6, Env{});  // names GPUs 5 and 1; the third entry is one past the last GPU
    const Env env = {{"CUDA_VISIBLE_DEVICES", "5,1," + std::to_string(physical_gpus()) + ",0"}};
    check_numbers(env, physical_of_entries({5, 1}));
  }
  SECTION("another node: GPULAB_NODE=tiny2 CUDA_VISIBLE_DEVICES=1,2") {
    const Env env = {{"GPULAB_NODE", "tiny2"}, {"CUDA_VISIBLE_DEVICES", "1,2"}};
    GPULAB_REQUIRE_GPUS(2, env);
    if (simulated()) check_numbers(env, physical_of_entries({1}, env));
  }
}

TEST_CASE("with CUDA_VISIBLE_DEVICES unset every GPU of the node is visible", "[lesson02]") {
  GPULAB_REQUIRE_GPUS(1, Env{});  // every GPU there is; every node has some
  // Real GPUs ignore GPULAB_NODE: there the machine's GPUs are checked once.
  const std::vector<std::string> nodes =
      simulated() ? std::vector<std::string>{"dgx-a100", "tiny2"} : std::vector<std::string>{"dgx-a100"};
  for (const std::string& name : nodes) {
    const Env env = {{"GPULAB_NODE", name}};
    check_numbers(env, cuda_order(env));  // 0, 1, ... where CUDA counts in PCI order
  }
}

TEST_CASE("stretch: nvidia-smi's numbers where CUDA counts in another order", "[lesson02][stretch]") {
  GPULAB_REQUIRE_SIMULATED_NODE("these scenarios need the simulated nodes; on real GPUs only the UUID lists are checked");
  SECTION("workstation-mixed, nothing set: CUDA puts the RTX 4090 (nvidia-smi's GPU 1) first") {
    const Env env = {{"GPULAB_NODE", "workstation-mixed"}};
    check_numbers(env, cuda_order(env));
  }
  SECTION("workstation-mixed, CUDA_VISIBLE_DEVICES=0,2: the entries count in CUDA's order") {
    const Env env = {{"GPULAB_NODE", "workstation-mixed"}, {"CUDA_VISIBLE_DEVICES", "0,2"}};
    check_numbers(env, physical_of_entries({0, 2}, env));
  }
  SECTION("workstation-mixed, CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=3,0") {
    const Env env = {{"GPULAB_NODE", "workstation-mixed"}, {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"},
                     {"CUDA_VISIBLE_DEVICES", "3,0"}};
    check_numbers(env, physical_of_entries({3, 0}, env));
  }
  SECTION("pascal-rig, nothing set: a 1080 Ti first, the rest in PCI order") {
    const Env env = {{"GPULAB_NODE", "pascal-rig"}};
    check_numbers(env, cuda_order(env));
  }
  SECTION("an entry that is not a number ends the list: CUDA_VISIBLE_DEVICES=4,3,two") {
    check_numbers({{"CUDA_VISIBLE_DEVICES", "4,3,two"}}, physical_of_entries({4, 3}));
  }
}

TEST_CASE("stretch: nvidia-smi's numbers when the list names GPUs by UUID", "[lesson02][stretch]") {
  const Env needs = {{"CUDA_VISIBLE_DEVICES", "6"}};
  GPULAB_REQUIRE_GPUS(gpus_needed(needs), needs);
  const auto uuids = gpu_uuids();
  SECTION("full UUIDs, nvidia-smi's GPUs 6 and 1") {
    check_numbers({{"CUDA_VISIBLE_DEVICES", uuids.at(6) + "," + uuids.at(1)}}, {6, 1});
  }
  SECTION("unique prefixes, nvidia-smi's GPUs 3, 0 and 5") {
    check_numbers({{"CUDA_VISIBLE_DEVICES", uuids.at(3).substr(0, 12) + "," + uuids.at(0).substr(0, 12) + "," +
                                                uuids.at(5).substr(0, 12)}},
                  {3, 0, 5});
  }
}

// Generated: lists of plain numbers (repeated, "02", past the last GPU, negative) on nodes
// whose CUDA order is nvidia-smi's, then (stretch) every node and every kind of entry; the
// tensors and "nvidia_smi_numbers" judged against the reference solution's.
namespace {
Family lesson02_family(const std::vector<std::string>& nodes, const ListKinds& kinds, const std::string& what) {
  Family family;
  family.lesson = "02";
  family.what = what;
  family.facts = {"nvidia_smi_numbers"};
  family.draw = [nodes, kinds](Rng& rng) {
    const std::string name = draw_one(rng, nodes);
    Drawn drawn;
    drawn.env = {{"GPULAB_NODE", name}};
    if (draw_int(rng, 0, 5) != 0) drawn.env.emplace_back("CUDA_VISIBLE_DEVICES", draw_visible_list(rng, name, kinds));
    return drawn;
  };
  return family;
}
}  // namespace

TEST_CASE("generated scenarios: lists of plain numbers, repeated, with leading zeros or past the last GPU", "[lesson02]") {
  check_against_reference(lesson02_family({"dgx-a100", "tiny2", "aws-p4d"}, ListKinds{},
                                          "lists of plain numbers on nodes of like GPUs"));
}

// Not MIG: which nvidia-smi number a MIG instance has (its GPU's? none?) the task leaves open.
TEST_CASE("stretch: generated scenarios on every node, with UUIDs, spaces and bad entries", "[lesson02][stretch]") {
  ListKinds kinds = every_kind();
  kinds.mig = false;
  check_against_reference(lesson02_family({"dgx-a100", "tiny2", "aws-p4d", "workstation-mixed", "pascal-rig"}, kinds,
                                          "every node but MIG's, every kind of list"));
}
