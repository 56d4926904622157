// `gpulab launch` and gpulab::distributed from outside: torchrun's environment, failure
// handling (a failing worker stops the rest, the exit code is its code, nothing is left
// running or holding GPU memory), clear errors instead of hangs, and ranks that train one
// model (identical parameters) from 1 to 8 processes.
#include <csignal>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <sstream>

#include <catch2/catch.hpp>

#include "model/profile.h"
#include "report/launch_summary.h"
#include "launched_run.h"
#include "memory_support.h"

using namespace gpulab::test;
using gpulab::ProcessOptions;
using gpulab::ProcessResult;
using gpulab::Profile;

namespace {

ProcessResult launch_with(const std::vector<std::string>& args, const Env& env = {}, double timeout_s = 60) {
  ProcessOptions options;
  options.argv = {bin_dir() + "/gpulab", "launch"};
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  options.env = {{"GPULAB_STATE_DIR", fresh_state_dir()}, {"OMP_NUM_THREADS", std::nullopt}};
  options.env.insert(options.env.end(), env.begin(), env.end());
  options.timeout_s = timeout_s;
  return run_process(options);
}

bool alive(int pid) { return kill(pid, 0) == 0; }

}  // namespace

TEST_CASE("every worker gets torchrun's variables: RANK, LOCAL_RANK, WORLD_SIZE, MASTER_PORT, OMP_NUM_THREADS=1",
          "[launch]") {
  const auto result = launch_with({"--nproc-per-node", "3", "--quiet", "--", "sh", "-c",
                              "echo $RANK $LOCAL_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $GROUP_RANK $MASTER_ADDR $MASTER_PORT "
                              "$OMP_NUM_THREADS $TORCHELASTIC_RESTART_COUNT"});
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  std::istringstream lines(result.out);
  std::set<int> ranks;
  std::set<std::string> ports;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string prefix, addr, port;
    int rank = -1, local = -1, world = 0, local_world = 0, group = -1, threads = 0, restarts = -1;
    fields >> prefix >> rank >> local >> world >> local_world >> group >> addr >> port >> threads >> restarts;
    CHECK(prefix == "[rank" + std::to_string(rank) + "]:");
    CHECK(local == rank);
    CHECK(world == 3);
    CHECK(local_world == 3);
    CHECK(group == 0);
    CHECK(addr == "127.0.0.1");
    CHECK(threads == 1);
    CHECK(restarts == 0);
    ranks.insert(rank);
    ports.insert(port);
  }
  CHECK(ranks == std::set<int>{0, 1, 2});
  REQUIRE(ports.size() == 1);
  CHECK(std::stoi(*ports.begin()) > 0);
}

TEST_CASE("two nodes on this host: RANK is node times nproc plus LOCAL_RANK, each node's GPULAB_HOST, and with --node-rank only one",
          "[launch]") {
  const std::string echo = "echo $RANK $LOCAL_RANK $GROUP_RANK $WORLD_SIZE ${GPULAB_HOST:-none}";
  const auto both = launch_with({"--nnodes", "2", "--nproc-per-node", "2", "--quiet", "--", "sh", "-c", echo});
  REQUIRE(both.exit_code == 0);
  for (const std::string line : {"[rank0]: 0 0 0 4 node0", "[rank1]: 1 1 0 4 node0", "[rank2]: 2 0 1 4 node1",
                                 "[rank3]: 3 1 1 4 node1"})
    CHECK(both.out.find(line + "\n") != std::string::npos);
  const auto second = launch_with({"--nnodes", "2", "--node-rank", "1", "--nproc-per-node", "2", "--master-port", "29999",
                              "--quiet", "--", "sh", "-c", echo + " $MASTER_PORT"});
  REQUIRE(second.exit_code == 0);
  CHECK(second.out.find("[rank2]: 2 0 1 4 none 29999\n") != std::string::npos);
  CHECK(second.out.find("[rank3]: 3 1 1 4 none 29999\n") != std::string::npos);
  CHECK(second.out.find("[rank0]") == std::string::npos);
}

TEST_CASE("a worker exiting with 3 stops the others and the launcher exits 3, naming the rank", "[launch]") {
  const std::string summary = fresh_state_dir() + "/summary.json";
  const auto result = launch_with({"--nproc-per-node", "3", "--summary-json", summary, "--", "sh", "-c",
                              "if [ $RANK = 1 ]; then exit 3; fi; exec sleep 300"});
  INFO(result.err);
  REQUIRE_FALSE(result.timed_out);  // the sleepers were stopped, not waited for
  CHECK(result.exit_code == 3);
  CHECK(result.err.find("rank 1 (pid ") != std::string::npos);
  CHECK(result.err.find("failed first (exit code 3)") != std::string::npos);
  std::ifstream file(summary);
  const gpulab::LaunchSummary read_back = gpulab::parse_launch_summary(std::string(std::istreambuf_iterator<char>(file), {}));
  CHECK(read_back.first_failure == std::optional<int>(1));
  for (const auto& worker : read_back.workers) {
    CHECK_FALSE(alive(worker.pid));
    if (worker.rank != 1) CHECK(worker.stopped);
  }
}

TEST_CASE("bad launcher input is a one-line usage error", "[launch]") {
  CHECK(launch_with({"--nproc-per-node", "0", "--", "true"}).exit_code == 2);
  CHECK(launch_with({"--nproc-per-node", "2", "--nnodes", "2", "--node-rank", "2", "--", "true"}).exit_code == 2);
  CHECK(launch_with({"--nproc-per-node", "2"}).exit_code == 2);
  const auto missing = launch_with({"--nproc-per-node", "1", "--quiet", "--", "/no/such/program"});
  CHECK(missing.exit_code == 127);
  CHECK(missing.err.find("cannot run '/no/such/program'") != std::string::npos);
}

TEST_CASE("a program started without a launcher says which variable is missing and how to start it", "[launch]") {
  const auto run = run_report_program(program("13", Target::Solution), {}, {{"RANK", std::nullopt}, {"WORLD_SIZE", std::nullopt}}, 60);
  const auto errors = run.errors("uncaught");
  REQUIRE(errors.size() == 1);
  CHECK(errors.front().find("WORLD_SIZE is not set") != std::string::npos);
  CHECK(errors.front().find("gpulab launch") != std::string::npos);
  CHECK(errors.front().find("torchrun --no-python") != std::string::npos);
}

TEST_CASE("a rank given the wrong MASTER_PORT fails with the address and the time limit, not a hang", "[launch]") {
  const auto result = launch_with({"--nproc-per-node", "2", "--quiet", "--", "sh", "-c",
                              "if [ $RANK = 1 ]; then MASTER_PORT=1; fi; exec " + program("13", Target::Solution)},
                             {{"GPULAB_DIST_TIMEOUT", "3"}}, 120);
  INFO(result.out << result.err);
  REQUIRE_FALSE(result.timed_out);
  CHECK(result.exit_code == 1);
  CHECK(result.out.find("did not complete within 3 s") != std::string::npos);
  CHECK(result.out.find("MASTER_ADDR:MASTER_PORT = 127.0.0.1:") != std::string::npos);
}

TEST_CASE("a rank that runs out of memory mid-run stops the others and leaves no memory in gpulab smi", "[launch]") {
  // The exercise of lesson 14: both ranks' 900 MiB shards land on tiny2's GPU 0 (2 GiB).
  const std::string state = fresh_state_dir();
  const auto result = launch_with({"--nproc-per-node", "2", "--", program("14", Target::Exercise), "--shard-mib", "900"},
                             {{"GPULAB_NODE", "tiny2"}, {"GPULAB_STATE_DIR", state}}, 120);
  INFO(result.out << result.err);
  REQUIRE_FALSE(result.timed_out);
  CHECK(result.exit_code == 1);
  // The profile's out-of-memory text: 1.13/2.0 "(GPU 0; ... total capacity", 2.2+ "GPU 0 has a total capacity".
  CHECK(result.out.find("CUDA out of memory. Tried to allocate 900.00 MiB") != std::string::npos);
  const Profile profile = smi(state, {{"GPULAB_NODE", "tiny2"}}).profile();
  const bool new_text = profile.torch_at_least(2, 2);
  CHECK(result.out.find(new_text ? ". GPU 0 has a total capacity of" : "(GPU 0; ") != std::string::npos);
  const auto after = smi(state, {{"GPULAB_NODE", "tiny2"}});
  for (int gpu = 0; gpu < 2; ++gpu) {
    CHECK(after.pids(gpu).empty());
    CHECK(after.used(gpu) == 0);
  }
}

TEST_CASE("1, 2 and 8 ranks end with identical parameters, each on its own GPU", "[launch]") {
  for (int ranks : {1, 2, 8}) {
    DYNAMIC_SECTION(ranks << " ranks") {
      const auto run = run_launched("13", {ranks}, {}, {}, Target::Solution);
      require_all_ranks_ok(run, "the ranks train");
      std::set<std::string> hashes;
      std::set<int> gpus;
      for (const auto& worker : run.workers) {
        REQUIRE(worker.report);
        hashes.insert(worker.report->fact("parameters_hash").get<std::string>());
        const std::set<int> listed = worker.listed_on();
        CHECK(listed.size() == 1);
        gpus.insert(listed.begin(), listed.end());
      }
      CHECK(hashes.size() == 1);
      CHECK(gpus.size() == static_cast<std::size_t>(ranks));
    }
  }
}
