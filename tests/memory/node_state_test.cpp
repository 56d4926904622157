// The shared node state from its own API (torch-free): liveness by pid and start time, and
// a forked child that counts as a process of its own.
#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "state/node_state.h"
#include "memory_support.h"

using namespace gpulab::test;

TEST_CASE("a process that has ended but is not yet reaped (a zombie) no longer counts as alive", "[memory][state]") {
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    pause();  // until killed
    _exit(0);
  }
  CHECK(gpulab::process_start_time(child) != 0);
  kill(child, SIGKILL);
  siginfo_t info{};
  REQUIRE(waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT) == 0);
  CHECK(gpulab::process_start_time(child) == 0);
  waitpid(child, nullptr, 0);
}

TEST_CASE("a forked child publishes as a process of its own, next to its parent", "[memory][state]") {
  const gpulab::Node tiny2 = node("tiny2");
  const std::string path = fresh_state_dir() + "/tiny2.state";
  gpulab::NodeState state(tiny2, path);
  gpulab::ProcessUsage mine;
  mine.used_bytes.assign(tiny2.gpus.size(), 0);
  mine.used_bytes[0] = 1 * kMiB;
  state.publish(mine);

  int go[2];
  int done[2];
  REQUIRE(pipe(go) == 0);
  REQUIRE(pipe(done) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // the same NodeState object, inherited
    gpulab::ProcessUsage its = mine;
    its.used_bytes[0] = 2 * kMiB;
    state.publish(its);
    char byte = 0;
    (void)!write(done[1], &byte, 1);
    (void)!read(go[0], &byte, 1);  // stay alive until the parent has looked
    _exit(0);
  }
  char byte = 0;
  REQUIRE(read(done[0], &byte, 1) == 1);
  std::map<int, std::uint64_t> used;
  for (const auto& process : state.processes()) used[process.pid] = process.used_bytes[0];
  (void)!write(go[1], &byte, 1);
  waitpid(child, nullptr, 0);
  CHECK(used == std::map<int, std::uint64_t>{{getpid(), 1 * kMiB}, {child, 2 * kMiB}});
  CHECK(state.used_bytes(0) == 1 * kMiB);  // the child has ended
  for (int fd : {go[0], go[1], done[0], done[1]}) close(fd);
}
