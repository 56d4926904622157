// Lesson 15: RANK vs LOCAL_RANK on two nodes. `gpulab launch --nnodes 2` runs each node's
// ranks on a simulated machine of its own (node0, node1). Each rank must train on a shard of
// the data no other rank trains on (together all WORLD_SIZE shards), exactly one process of
// the job writes the checkpoint, and each rank still uses, on its own node, the GPU CUDA
// numbers LOCAL_RANK. Observed from outside: the launcher's summary says which node's state
// listed each process on which physical GPU, and which rank wrote which file (each rank has
// a temporary folder of its own); the data each rank trained on is the observed "the rank's
// data" tensor's checksum, which the library takes, compared with each shard's.
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "expect.h"
#include "gpu_requirements.h"
#include "launched_run.h"

using namespace gpulab::test;

namespace {

// The checksum of the data a rank observed as "the rank's data" ("" when it has none).
std::string data_checksum(const LessonRun& report) {
  for (const auto& o : report.report.at("observations"))
    if (o.at("label") == "the rank's data")
      for (const auto& t : o.at("tensors"))
        if (t.value("name", "") == "x") return t.value("checksum", "");
  return "";
}

// The checksums of the job's shards, 0 .. world-1: the reference solution's ranks' data,
// launched once per job size (the data of shard s does not depend on the node or the list).
// Empty where this build has no solution (a student edition).
const std::set<std::string>& shard_checksums(int per_node, int nodes) {
  static std::map<int, std::set<std::string>> by_world;
  const int world = per_node * nodes;
  auto found = by_world.find(world);
  if (found != by_world.end()) return found->second;
  std::set<std::string> checksums;
  if (std::filesystem::exists(program("15", Target::Solution))) {
    const auto reference = run_launched("15", {per_node, nodes}, {{"GPULAB_NODE", "dgx-a100"}}, {}, Target::Solution);
    require_all_ranks_ok(reference, "the reference solution's ranks train (to know each shard's data)");
    for (int r = 0; r < world; ++r) checksums.insert(data_checksum(*reference.rank(r).report));
  }
  return by_world.emplace(world, checksums).first->second;
}

struct Scenario {
  Env env;
  int per_node;
  std::vector<int> visible;  // the CUDA_VISIBLE_DEVICES list on every node; empty: unset
};

void check(const Scenario& scenario, int nodes = 2) {
  GPULAB_REQUIRE_GPUS(gpus_needed(scenario.env), scenario.env);
  const auto run = run_launched("15", {scenario.per_node, nodes}, scenario.env);
  const int world = nodes * scenario.per_node;
  require_all_ranks_ok(run, "the " + std::to_string(world) + " ranks of " + std::to_string(nodes) + " nodes train");
  std::set<std::string> hashes;
  std::set<std::string> shards;
  std::vector<int> writers;
  for (int r = 0; r < world; ++r) {
    const int local = r % scenario.per_node;
    const int entry = scenario.visible.empty() ? local : scenario.visible.at(static_cast<std::size_t>(local));
    const int gpu = cuda_order(scenario.env).at(static_cast<std::size_t>(entry));
    const std::string host = "node" + std::to_string(r / scenario.per_node);
    const auto& worker = run.rank(r);
    const std::string who = "rank " + std::to_string(r);
    INFO(who << " runs on " << host << " with LOCAL_RANK " << local << ": cuda:" << local << " there is physical GPU " << gpu);
    expect_equal(who + "'s node", worker.host, host);
    expect_that(worker.listed_on() == std::set<int>{gpu}, who + "'s process listed on " + host + "'s " + gpus({gpu}),
                "on " + gpus(worker.listed_on()));
    require_that(worker.report.has_value(), who + "'s report", "none");
    expect_on_gpu(*worker.report, "after training", "weight", gpu);
    hashes.insert(worker.report->fact("parameters_hash").get<std::string>());
    // The data's values as the library saw them, not the program's fact "shard".
    const std::string data = data_checksum(*worker.report);
    require_that(!data.empty(), who + "'s data observed (\"the rank's data\", x)", "no such observation");
    expect_that(shards.insert(data).second, who + " trains on a shard no other rank trains on",
                "the same data as another rank (its fact shard = " + worker.report->report.at("facts").value("shard", nlohmann::json()).dump() + ")");
    // Observed by the filesystem, not the program's fact writes_checkpoint.
    if (std::any_of(worker.wrote.begin(), worker.wrote.end(),
                    [](const std::string& name) { return name.size() > 3 && name.compare(name.size() - 3, 3, ".pt") == 0; }))
      writers.push_back(r);
  }
  const auto& all_shards = shard_checksums(scenario.per_node, nodes);
  if (!all_shards.empty()) {
    std::size_t known = 0;
    for (const auto& data : shards) known += all_shards.count(data);
    expect_that(known == shards.size() && shards.size() == all_shards.size(),
                "the job's ranks train on its " + std::to_string(world) + " shards, 0 to " + std::to_string(world - 1) +
                    ", all of its data",
                std::to_string(known) + " of the " + std::to_string(world) + " shards (the other ranks' data is no shard of this job's)");
  }
  expect_that(hashes.size() == 1, "the same parameters on every rank of every node (one hash)",
              std::to_string(hashes.size()) + " different parameter hashes");
  std::string who_wrote;
  for (int r : writers) who_wrote += (who_wrote.empty() ? "rank " : ", rank ") + std::to_string(r);
  // Which one the task leaves open (rank 0 by convention, the hints say): exactly one.
  expect_that(writers.size() == 1, "one process of the whole job writes the checkpoint (a .pt file)",
              writers.empty() ? std::string("no process wrote one") : who_wrote + " wrote one");
}

}  // namespace

TEST_CASE("the lesson's scenario: two pascal-rig nodes, 4 ranks each: eight shards, one checkpoint, rank r on GPU "
          "LOCAL_RANK of node r/4",
          "[lesson15]") {
  check({{{"GPULAB_NODE", "pascal-rig"}}, 4, {}});
}

TEST_CASE("four tiny2 nodes, 2 ranks each: eight shards, one checkpoint", "[lesson15]") {
  check({{{"GPULAB_NODE", "tiny2"}}, 2, {}}, 4);
}

TEST_CASE("two dgx-a100 nodes under CUDA_VISIBLE_DEVICES=2,3, 2 ranks each: physical GPUs 2 and 3 on both",
          "[lesson15]") {
  check({{{"CUDA_VISIBLE_DEVICES", "2,3"}}, 2, {2, 3}});
}

TEST_CASE("two dgx-a100 nodes, 3 ranks each (fewer ranks than GPUs): each node's physical GPUs 0, 1 and 2",
          "[lesson15]") {
  check({{}, 3, {}});
}

// The stretch: each rank reports the PCI address of its GPU (fact "pci_bus_id"), as nvidia-smi
// prints it; it must be the address, in the node file, of the GPU the rank was seen using.
namespace {

void check_bus_ids(const Scenario& scenario, const std::string& node_name) {
  GPULAB_REQUIRE_GPUS(gpus_needed(scenario.env), scenario.env);
  require_that(simulated(scenario.env), "the simulated node, whose node file names each GPU's PCI address",
               "real GPUs");
  const auto run = run_launched("15", {scenario.per_node, 2}, scenario.env);
  require_all_ranks_ok(run, "the ranks of two nodes train");
  const auto node_file = node(node_name);
  for (int r = 0; r < 2 * scenario.per_node; ++r) {
    const int local = r % scenario.per_node;
    const int entry = scenario.visible.empty() ? local : scenario.visible.at(static_cast<std::size_t>(local));
    const int gpu = cuda_order(scenario.env).at(static_cast<std::size_t>(entry));
    const auto& worker = run.rank(r);
    const std::string who = "rank " + std::to_string(r) + " (node" + std::to_string(r / scenario.per_node) + ")";
    require_that(worker.report.has_value(), who + "'s report", "none");
    expect_fact(*worker.report, who, "pci_bus_id", node_file.gpus.at(static_cast<std::size_t>(gpu)).pci_bus_id,
                "(its node's physical GPU " + std::to_string(gpu) + ")");
  }
}

}  // namespace

TEST_CASE("stretch: two pascal-rig nodes under CUDA_VISIBLE_DEVICES=3,1, 2 ranks each: the PCI addresses of "
          "physical GPUs 3 and 0 on each node (CUDA's order there is 1, 0, 2, 3)",
          "[lesson15][stretch]") {
  check_bus_ids({{{"GPULAB_NODE", "pascal-rig"}, {"CUDA_VISIBLE_DEVICES", "3,1"}}, 2, {3, 1}}, "pascal-rig");
}

TEST_CASE("stretch: two dgx-a100 nodes, 2 ranks each: the PCI addresses of physical GPUs 0 and 1 on each node",
          "[lesson15][stretch]") {
  check_bus_ids({{}, 2, {}}, "dgx-a100");
}

TEST_CASE("stretch: two aws-p4d nodes under CUDA_VISIBLE_DEVICES=1,0, 2 ranks each: GPUs 1 and 0 share a PCI bus "
          "and differ in the device part (10:1D.0 and 10:1C.0)",
          "[lesson15][stretch]") {
  check_bus_ids({{{"GPULAB_NODE", "aws-p4d"}, {"CUDA_VISIBLE_DEVICES", "1,0"}}, 2, {1, 0}}, "aws-p4d");
}
