// The process runner: how the CLI runs lessons and how tests observe them.
#include <catch2/catch.hpp>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <string>

#include <unistd.h>

#include "proc/process.h"

using gpulab::ProcessOptions;
using gpulab::ProcessResult;
using gpulab::run_process;

namespace {

ProcessResult shell(const std::string& script, ProcessOptions options = {}) {
  options.argv = {"/bin/sh", "-c", script};
  return run_process(options);
}

// True once process `pid` has ended: gone, or a zombie waiting for its parent.
bool ended(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const auto close = line.rfind(')');
  return close == std::string::npos || line.substr(close + 2, 1) == "Z";
}

}  // namespace

TEST_CASE("a program's exit code, stdout and stderr come back", "[process]") {
  const auto result = shell("echo out; echo err >&2; exit 3");
  CHECK(result.exit_code == 3);
  CHECK_FALSE(result.ok());
  CHECK(result.signal == 0);
  CHECK_FALSE(result.timed_out);
  CHECK(result.out == "out\n");
  CHECK(result.err == "err\n");
  CHECK(result.outcome(10) == "exited with code 3");
  CHECK(shell("true").ok());
}

TEST_CASE("output larger than a pipe's buffer is read while the program runs", "[process]") {
  // 1 MiB on stdout and on stderr: a runner that waited for the exit first would deadlock.
  const auto result = shell("head -c 1048576 /dev/zero; head -c 1048576 /dev/zero >&2");
  CHECK(result.ok());
  CHECK(result.out.size() == 1048576);
  CHECK(result.err.size() == 1048576);
}

TEST_CASE("a program killed by a signal reports the signal, not an exit code", "[process]") {
  const auto result = shell("kill -SEGV $$");
  CHECK(result.signal == SIGSEGV);
  CHECK(result.exit_code == -1);
  CHECK_FALSE(result.ok());
  CHECK(result.outcome(10) == "crashed with SIGSEGV (signal " + std::to_string(SIGSEGV) + ")");
}

TEST_CASE("a program past its time limit is killed with the children it started", "[process]") {
  char dir_pattern[] = "/tmp/gpulab-unit-XXXXXX";
  REQUIRE(mkdtemp(dir_pattern) != nullptr);
  const std::string pid_file = std::string(dir_pattern) + "/child.pid";
  ProcessOptions options;
  options.timeout_s = 0.5;
  // The shell starts a child that would outlive it, records its pid, and waits.
  const auto result = shell("sleep 300 & echo $! > " + pid_file + "; wait", options);
  CHECK(result.timed_out);
  CHECK(result.exit_code == -1);
  CHECK(result.signal == 0);
  CHECK_FALSE(result.ok());
  CHECK_THAT(result.outcome(options.timeout_s), Catch::StartsWith("did not finish within"));

  int child = 0;
  std::ifstream(pid_file) >> child;
  std::remove(pid_file.c_str());
  rmdir(dir_pattern);
  REQUIRE(child > 0);
  // SIGKILL reaches the child asynchronously; allow it a moment to die.
  for (int i = 0; i < 500 && !ended(child); ++i) usleep(10000);
  CHECK(ended(child));
}

TEST_CASE("environment changes apply to the child only: set, override and unset", "[process]") {
  setenv("GPULAB_TEST_INHERITED", "parent", 1);
  setenv("GPULAB_TEST_REMOVED", "parent", 1);
  ProcessOptions options;
  options.env = {{"GPULAB_TEST_NEW", "new value"},
                 {"GPULAB_TEST_INHERITED", "child"},
                 {"GPULAB_TEST_REMOVED", std::nullopt},
                 {"GPULAB_TEST_EMPTY", ""}};
  const auto result = shell(
      "echo \"${GPULAB_TEST_NEW-unset}|${GPULAB_TEST_INHERITED-unset}|${GPULAB_TEST_REMOVED-unset}|"
      "${GPULAB_TEST_EMPTY-unset}|${GPULAB_TEST_UNTOUCHED-unset}\"",
      options);
  CHECK(result.out == "new value|child|unset||unset\n");
  CHECK(std::string(std::getenv("GPULAB_TEST_INHERITED")) == "parent");  // ours is unchanged
  CHECK(std::getenv("GPULAB_TEST_REMOVED") != nullptr);
  CHECK(std::getenv("GPULAB_TEST_NEW") == nullptr);

  SECTION("variables not named are inherited") {
    const auto inherited = shell("echo \"${GPULAB_TEST_REMOVED-unset}\"");
    CHECK(inherited.out == "parent\n");
  }
  unsetenv("GPULAB_TEST_INHERITED");
  unsetenv("GPULAB_TEST_REMOVED");
}

TEST_CASE("the child runs in the working directory it is given", "[process]") {
  ProcessOptions options;
  options.working_directory = "/";
  CHECK(shell("pwd", options).out == "/\n");
}

TEST_CASE("a program that cannot be started exits with 127 and says why", "[process]") {
  ProcessOptions options;
  options.argv = {"/nonexistent/gpulab-program"};
  const auto result = run_process(options);
  CHECK(result.exit_code == 127);
  CHECK_THAT(result.err, Catch::Contains("cannot run '/nonexistent/gpulab-program'"));
  ProcessOptions none;
  CHECK_THROWS_AS(run_process(none), std::runtime_error);
}
