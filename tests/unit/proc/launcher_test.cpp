// The launcher's plan, rule by rule: which workers this host starts and the torchrun
// environment each gets (src/proc/launcher.cpp). Running them is tested from outside in
// tests/parallel/launch_test.cpp.
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <stdexcept>

#include <catch2/catch.hpp>

#include "proc/launcher.h"
#include "model/node.h"
#include "state/node_state.h"

namespace {

using gpulab::LaunchPlan;
using gpulab::WorkerSpec;

std::map<std::string, std::string> env_of(const WorkerSpec& worker) {
  std::map<std::string, std::string> env;
  for (const auto& [name, value] : worker.env)
    if (value) env[name] = *value;
  return env;
}

const char* nothing_inherited(const char*) { return nullptr; }

LaunchPlan plan(int nnodes, int nproc, std::optional<int> node_rank = std::nullopt) {
  LaunchPlan p;
  p.nnodes = nnodes;
  p.nproc_per_node = nproc;
  p.node_rank = node_rank;
  p.master_port = 29400;
  p.command = {"true"};
  return p;
}

}  // namespace

TEST_CASE("one node: RANK = LOCAL_RANK, world sizes, master, OMP_NUM_THREADS=1 for more than one", "[unit][launcher]") {
  const auto workers = gpulab::plan_workers(plan(1, 3), nothing_inherited);
  REQUIRE(workers.size() == 3);
  for (int r = 0; r < 3; ++r) {
    const auto env = env_of(workers[static_cast<std::size_t>(r)]);
    CHECK(env.at("RANK") == std::to_string(r));
    CHECK(env.at("LOCAL_RANK") == std::to_string(r));
    CHECK(env.at("GROUP_RANK") == "0");
    CHECK(env.at("WORLD_SIZE") == "3");
    CHECK(env.at("LOCAL_WORLD_SIZE") == "3");
    CHECK(env.at("MASTER_ADDR") == "127.0.0.1");
    CHECK(env.at("MASTER_PORT") == "29400");
    CHECK(env.at("OMP_NUM_THREADS") == "1");
    CHECK(env.at("TORCHELASTIC_USE_AGENT_STORE") == "False");
    CHECK(env.count("GPULAB_HOST") == 0);
  }
  CHECK(env_of(gpulab::plan_workers(plan(1, 1), nothing_inherited).front()).count("OMP_NUM_THREADS") == 0);
}

TEST_CASE("an OMP_NUM_THREADS the user set is kept", "[unit][launcher]") {
  const auto workers = gpulab::plan_workers(plan(1, 2), [](const char* name) -> const char* {
    return std::string(name) == "OMP_NUM_THREADS" ? "4" : nullptr;
  });
  CHECK(env_of(workers.front()).count("OMP_NUM_THREADS") == 0);  // inherited as it is
}

TEST_CASE("two nodes here: global ranks node by node, each node's own GPULAB_HOST", "[unit][launcher]") {
  const auto workers = gpulab::plan_workers(plan(2, 2), nothing_inherited);
  REQUIRE(workers.size() == 4);
  CHECK(workers[2].rank == 2);
  CHECK(workers[2].local_rank == 0);
  CHECK(workers[2].node_rank == 1);
  CHECK(env_of(workers[3]).at("GPULAB_HOST") == "node1");
  CHECK(env_of(workers[0]).at("GPULAB_HOST") == "node0");
  CHECK(env_of(workers[3]).at("WORLD_SIZE") == "4");
  CHECK(env_of(workers[3]).at("GROUP_WORLD_SIZE") == "2");
}

TEST_CASE("node rank 1 of 2 (--node-rank): only that node's workers, no simulated host", "[unit][launcher]") {
  const auto workers = gpulab::plan_workers(plan(2, 4, 1), nothing_inherited);
  REQUIRE(workers.size() == 4);
  CHECK(workers.front().rank == 4);
  CHECK(workers.back().rank == 7);
  CHECK(env_of(workers.back()).at("LOCAL_RANK") == "3");
  CHECK(env_of(workers.back()).count("GPULAB_HOST") == 0);
}

TEST_CASE("plans that cannot run are refused with a message", "[unit][launcher]") {
  CHECK_THROWS_AS(gpulab::validate(plan(1, 0)), std::invalid_argument);
  CHECK_THROWS_AS(gpulab::validate(plan(0, 1)), std::invalid_argument);
  CHECK_THROWS_WITH(gpulab::validate(plan(2, 1, 2)), Catch::Contains("--node-rank must be from 0 to"));
  LaunchPlan empty = plan(1, 1);
  empty.command.clear();
  CHECK_THROWS_WITH(gpulab::validate(empty), Catch::Contains("no program to launch"));
  CHECK(gpulab::free_port() > 0);
}

TEST_CASE("GPULAB_HOST gives each simulated machine its own state file, and only a plain name is accepted",
          "[unit][launcher]") {
  const gpulab::Node node = gpulab::load_node_file(std::string(GPULAB_TEST_SOURCE_DIR) + "/nodes/tiny2.json");
  const char* before = std::getenv("GPULAB_STATE_DIR");
  const std::optional<std::string> saved = before != nullptr ? std::optional<std::string>(before) : std::nullopt;
  setenv("GPULAB_STATE_DIR", "/nonexistent-state-dir", 1);
  unsetenv("GPULAB_HOST");
  CHECK(gpulab::NodeState::default_path(node) == "/nonexistent-state-dir/tiny2.state");
  setenv("GPULAB_HOST", "node1", 1);
  CHECK(gpulab::NodeState::default_path(node) == "/nonexistent-state-dir/tiny2@node1.state");
  for (const char* bad : {"../x", "a/b", ".hidden", "node 1"}) {
    setenv("GPULAB_HOST", bad, 1);
    CHECK_THROWS_WITH(gpulab::NodeState::default_path(node), Catch::Contains("is not a simulated host name"));
  }
  unsetenv("GPULAB_HOST");
  if (saved) setenv("GPULAB_STATE_DIR", saved->c_str(), 1);
  else unsetenv("GPULAB_STATE_DIR");
}
