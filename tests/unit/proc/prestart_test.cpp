// A prestarted program's runs must be what fresh runs would have been: their own arguments,
// environment, folder, output, exit, crash and time limit, and a refusal when the parent may
// not fork (then the caller starts the program afresh).
#include <catch2/catch.hpp>

#include <csignal>
#include <cstdlib>
#include <string>

#include "proc/prestart.h"

using gpulab::PrestartedProgram;
using gpulab::ProcessOptions;

namespace {
const std::string kProbe = std::string(GPULAB_TEST_BIN_DIR) + "/prestart-probe";

ProcessOptions probe(std::vector<std::string> args, gpulab::ProcessOptions options = {}) {
  options.argv = {kProbe};
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  return options;
}
}  // namespace

TEST_CASE("a prestarted run gets its own arguments, environment, folder and output", "[prestart]") {
  setenv("PRESTART_TEST_INHERITED", "parent", 1);
  PrestartedProgram program(kProbe);
  unsetenv("PRESTART_TEST_INHERITED");

  ProcessOptions options = probe({"env", "PRESTART_TEST_VALUE"});
  options.env = {{"PRESTART_TEST_VALUE", "first"}};
  options.working_directory = "/";
  const auto first = program.run(options);
  REQUIRE(first);
  CHECK(first->exit_code == 0);
  CHECK(first->out.rfind("first in / pid ", 0) == 0);
  CHECK(first->err == "to stderr\n");

  options.env = {{"PRESTART_TEST_VALUE", "second"}};
  const auto second = program.run(options);
  REQUIRE(second);
  CHECK(second->out.rfind("second in / pid ", 0) == 0);
  CHECK(second->out != first->out);  // a new process each time

  // The run's environment is this process's now, not the parent's at its start.
  const auto inherited = program.run(probe({"env", "PRESTART_TEST_INHERITED"}));
  REQUIRE(inherited);
  CHECK(inherited->out.rfind("(unset) in ", 0) == 0);
  ProcessOptions removed = probe({"env", "HOME"});
  removed.env = {{"HOME", std::nullopt}};
  const auto without_home = program.run(removed);
  REQUIRE(without_home);
  CHECK(without_home->out.rfind("(unset) in ", 0) == 0);
}

TEST_CASE("a prestarted run's exit code, crash and time limit come back as from run_process", "[prestart]") {
  PrestartedProgram program(kProbe);
  const auto exited = program.run(probe({"exit", "7"}));
  REQUIRE(exited);
  CHECK(exited->exit_code == 7);
  CHECK(exited->signal == 0);

  const auto crashed = program.run(probe({"crash"}));
  REQUIRE(crashed);
  CHECK(crashed->signal == SIGTERM);
  CHECK(crashed->exit_code == -1);

  ProcessOptions hang = probe({"hang"});
  hang.timeout_s = 0.3;
  const auto hung = program.run(hang);
  REQUIRE(hung);
  CHECK(hung->timed_out);
  CHECK(hung->outcome(hang.timeout_s) == "did not finish within 0.3 s and was stopped");

  // The parent still serves after all that.
  const auto again = program.run(probe({"exit", "0"}));
  REQUIRE(again);
  CHECK(again->ok());
}

TEST_CASE("a parent that may not fork refuses, and a program that is not one is run afresh", "[prestart]") {
  setenv("PROBE_REFUSE", "1", 1);
  PrestartedProgram refusing(kProbe);
  unsetenv("PROBE_REFUSE");
  CHECK_FALSE(refusing.run(probe({"exit", "0"})));

  // A program that never serves (it ends at once): no run, and no hang.
  PrestartedProgram not_a_parent("/bin/true");
  ProcessOptions options;
  options.argv = {"/bin/true"};
  CHECK_FALSE(not_a_parent.run(options));
  // Another program's run is not this parent's to fork.
  PrestartedProgram program(kProbe);
  CHECK_FALSE(program.run(options));
}
