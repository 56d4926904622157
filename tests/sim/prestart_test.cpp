// A prestarted lesson program's runs are fresh processes from the program's view: its
// static initialisers and main() see the run's arguments and environment, and its exit
// handlers run (src/report/prestart_entry.cpp). Before, a prestarted parent ran main() up to
// gpulab::run_lesson with no arguments, so lesson 03 answered at the top of main() failed
// every check that passed with GPULAB_PRESTART_RUNS=0.
#include <catch2/catch.hpp>

#include <string>

#include "proc/prestart.h"
#include "sim_support.h"

using namespace gpulab::test;

namespace {
const std::string kProbe = bin_dir() + "/fresh-process-probe";

gpulab::ProcessOptions probe_run(std::vector<std::string> args, const std::string& value) {
  gpulab::ProcessOptions options;
  options.argv = {kProbe};
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  options.env = {{"PROBE_VALUE", value},
                 {"CUDA_VISIBLE_DEVICES", std::nullopt},
                 {"GPULAB_NODE", std::nullopt},
                 {"NVIDIA_VISIBLE_DEVICES", std::nullopt},
                 {"GPULAB_STATE_DIR", fresh_state_dir()}};
  options.timeout_s = 60;
  return options;
}
}  // namespace

TEST_CASE("a prestarted run prints what a fresh run prints, from its static initialisers to its exit", "[prestart]") {
  // The parent starts under another value and no arguments: nothing of that may show.
  setenv("PROBE_VALUE", "the parent's", 1);
  gpulab::PrestartedProgram parent(kProbe);
  unsetenv("PROBE_VALUE");

  SECTION("two arguments, the first a CUDA_VISIBLE_DEVICES list set at the top of main()") {
    const auto options = probe_run({"5,6", "second"}, "the run's");
    const gpulab::ProcessResult fresh = gpulab::run_process(options);
    const auto forked = parent.run(options);
    REQUIRE(forked);  // served by a fork, not started afresh after a refusal
    INFO("fresh:\n" << fresh.out << fresh.err << "prestarted:\n" << forked->out << forked->err);
    CHECK(fresh.out.find("static initialiser saw PROBE_VALUE=the run's\n") != std::string::npos);
    CHECK(fresh.out.find("constructor saw argc=3\n") != std::string::npos);
    CHECK(fresh.out.find("CUDA sees 2 GPUs\n") != std::string::npos);
    CHECK(fresh.out.find("static destructor ran\n") != std::string::npos);
    CHECK(forked->out == fresh.out);
    CHECK(forked->exit_code == 3);
    CHECK(fresh.exit_code == 3);
  }
  SECTION("no argument at all") {
    const auto options = probe_run({}, "another");
    const gpulab::ProcessResult fresh = gpulab::run_process(options);
    const auto forked = parent.run(options);
    REQUIRE(forked);
    CHECK(fresh.out.find("CUDA sees 8 GPUs\n") != std::string::npos);
    CHECK(forked->out == fresh.out);
    CHECK(forked->exit_code == fresh.exit_code);
  }
}
