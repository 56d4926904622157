// The reproduction of the shared-machine report (docs/shared-node.md): a node state folder
// holding `dgx-a100.state` as a symbolic link to a file with text in it. `gpulab smi`, and
// a plain LibTorch program that uses CUDA, must stop with a clear error and leave the
// linked file byte for byte as it was; before, they "rebuilt" it with 149 568 bytes.
#include <fstream>
#include <iterator>

#include <unistd.h>

#include <catch2/catch.hpp>

#include "memory_support.h"

using namespace gpulab::test;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

gpulab::ProcessResult run_with_state(const std::vector<std::string>& argv, const std::string& state_dir) {
  gpulab::ProcessOptions options;
  options.argv = argv;
  options.env = {{"CUDA_VISIBLE_DEVICES", std::nullopt}, {"GPULAB_NODE", std::nullopt},
                 {"GPULAB_SHARED_NODE", std::nullopt}, {"GPULAB_STATE_DIR", state_dir}};
  options.timeout_s = 60;
  return gpulab::run_process(options);
}

}  // namespace

TEST_CASE("a symbolic link as the node state file stops gpulab, and the linked file is untouched", "[memory][state]") {
  const std::string state_dir = fresh_state_dir();
  const std::string elsewhere = fresh_state_dir();
  const std::string linked = elsewhere + "/notes.txt";
  const std::string text = "my notes: nothing here is a node state\n";
  { std::ofstream(linked) << text; }
  const std::string state_file = state_dir + "/" + gpulab::kDefaultNodeName + ".state";
  REQUIRE(symlink(linked.c_str(), state_file.c_str()) == 0);

  SECTION("gpulab smi") {
    const auto result = run_with_state({bin("gpulab"), "smi"}, state_dir);
    INFO("gpulab smi " << result.outcome(60) << "\nstderr:\n" << result.err);
    CHECK(result.exit_code == 2);
    CHECK_THAT(result.err, Catch::Contains("node state file '" + state_file + "' is not safe to use: it is a symbolic link") &&
                               Catch::Contains("rm '" + state_file + "'"));
    CHECK(result.err.find("rebuilt") == std::string::npos);
  }
  SECTION("a plain LibTorch program that uses CUDA") {
    const auto result = run_with_state({bin("memory-hold"), "cuda:0", "1"}, state_dir);
    INFO("memory-hold " << result.outcome(60) << "\nstderr:\n" << result.err);
    CHECK_FALSE(result.ok());
    CHECK_THAT(result.err, Catch::Contains("node state file '" + state_file + "' is not safe to use"));
  }
  CHECK(read_file(linked) == text);
}
