// Listing a host's states (state/host_states.h) from a scratch state folder: this host's
// file and another simulated host's, and a process's RANK from its environment.
#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include "state/host_states.h"
#include "state/state_test_support.h"

using namespace gpulab;
using namespace gpulab::state_test;

namespace {

constexpr std::uint64_t kMiB = 1024ull * 1024ull;

ProcessUsage holding(std::uint64_t gpu0, std::uint64_t gpu1, std::uint64_t context_mask) {
  ProcessUsage usage;
  usage.pid = getpid();
  usage.name = "holder";
  usage.used_bytes = {gpu0, gpu1};
  usage.context_mask = context_mask;
  return usage;
}

// A child that sleeps with RANK=`rank` as its whole environment; killed and reaped at the end.
class RankedChild {
 public:
  explicit RankedChild(const char* rank_entry) {
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      char* const argv[] = {const_cast<char*>("sleep"), const_cast<char*>("30"), nullptr};
      char* const envp[] = {const_cast<char*>(rank_entry), nullptr};
      execve("/bin/sleep", argv, envp);
      _exit(127);
    }
    // Until the exec: /proc shows the new program's name.
    for (int i = 0; i < 500 && read_file("/proc/" + std::to_string(pid_) + "/comm") != "sleep\n"; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ~RankedChild() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  RankedChild(const RankedChild&) = delete;
  RankedChild& operator=(const RankedChild&) = delete;
  int pid() const { return pid_; }

 private:
  int pid_ = -1;
};

}  // namespace

TEST_CASE("host states: this host's file always, every NODE@HOST file with all hosts", "[state][host_states]") {
  ScratchFolder folder;
  ScopedEnv dir("GPULAB_STATE_DIR", folder.path());
  ScopedEnv host("GPULAB_HOST", std::nullopt);
  const Node node = tiny2();
  NodeState here(node, folder / "tiny2.state");
  here.publish(holding(600 * kMiB, 0, 0b01));
  NodeState there(node, folder / "tiny2@b.state");
  there.publish(holding(0, 300 * kMiB, 0b10));
  write_file(folder / "other@c.state", "");  // another node's: not listed
  write_file(folder / "tiny2@.state", "");   // no host name: not listed

  CHECK(host_state_files(node, false).size() == 1);
  const auto files = host_state_files(node, true);
  REQUIRE(files.size() == 2);
  CHECK(files.at("") == folder / "tiny2.state");
  CHECK(files.at("b") == folder / "tiny2@b.state");

  HostStates states(node, true);
  const auto hosts = states.read();
  REQUIRE(hosts.size() == 2);
  CHECK(hosts[0].host.empty());
  CHECK(hosts[1].host == "b");
  for (const auto& view : hosts) {
    CHECK(view.error.empty());
    REQUIRE(view.gpus.size() == 2);
    CHECK(view.gpus[1].name == "NVIDIA T400");
    CHECK(view.gpus[1].total_bytes == 2048 * kMiB);
    CHECK(view.context_bytes == std::vector<std::uint64_t>{160 * kMiB, 160 * kMiB});
    REQUIRE(view.processes.size() == 1);
    CHECK(view.processes[0].pid == getpid());
    CHECK(view.processes[0].rank != "?");  // our own environment is readable
  }
  CHECK(hosts[0].gpus[0].used_bytes == 600 * kMiB);
  CHECK(hosts[0].processes[0].context_mask == 0b01);
  CHECK(hosts[1].gpus[0].used_bytes == 0);
  CHECK(hosts[1].gpus[1].used_bytes == 300 * kMiB);
  CHECK(hosts[1].processes[0].used_bytes == std::vector<std::uint64_t>{0, 300 * kMiB});
}

TEST_CASE("host states: a host whose state cannot be read says why, the others still show", "[state][host_states]") {
  ScratchFolder folder;
  ScopedEnv dir("GPULAB_STATE_DIR", folder.path());
  ScopedEnv host("GPULAB_HOST", std::nullopt);
  std::filesystem::create_symlink(folder / "elsewhere", folder / "tiny2@c.state");
  const auto hosts = HostStates(tiny2(), true).read();
  REQUIRE(hosts.size() == 2);
  CHECK(hosts[0].error.empty());
  CHECK(hosts[0].processes.empty());
  CHECK(hosts[1].host == "c");
  CHECK_FALSE(hosts[1].error.empty());
}

TEST_CASE("describe_process: the command from /proc, RANK from the environment", "[state][host_states]") {
  RankedChild child("RANK=5");
  const ProcessRow row = describe_process(child.pid(), "from-state");
  CHECK(row.pid == child.pid());
  CHECK(row.command == "sleep");
  CHECK(row.rank == "5");
  CHECK(row.used_bytes.empty());
  RankedChild unranked("WORLD_SIZE=2");
  CHECK(describe_process(unranked.pid(), "x").rank == "-");
}

TEST_CASE("observed_host: a row per process with its usage summed per GPU, contexts unknown", "[state][host_states]") {
  const int me = getpid();
  const HostView view = observed_host({{0, "GPU A", 100, 30}, {1, "GPU B", 100, 20}},
                                      {{me, "me", 0, 10}, {me, "me", 1, 20}, {me, "me", 0, 20}});
  REQUIRE(view.processes.size() == 1);
  CHECK(view.processes[0].used_bytes == std::vector<std::uint64_t>{30, 20});
  CHECK_FALSE(view.processes[0].contexts_known);
  CHECK(view.gpus[0].used_bytes == 30);
  CHECK(view.host.empty());
}
