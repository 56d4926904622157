#include "sim_support.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <catch2/catch.hpp>

#include "gpulab/visibility.h"

namespace gpulab::test {
namespace {

// The tests that run in this process see the default node with every GPU visible, and a
// node state of their own; the driver reads this environment at the first CUDA call.
struct InProcessEnvironment : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;

  void testRunStarting(const Catch::TestRunInfo& info) override {
    TestEventListenerBase::testRunStarting(info);
    for (const char* name : {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "GPULAB_NODE", "GPULAB_NODES_DIR"})
      unsetenv(name);
    state_dir_ = fresh_state_dir();
    setenv("GPULAB_STATE_DIR", state_dir_.c_str(), /*overwrite=*/1);
  }
  void testRunEnded(const Catch::TestRunStats& stats) override {
    TestEventListenerBase::testRunEnded(stats);
    std::error_code ignored;
    std::filesystem::remove_all(state_dir_, ignored);
  }

 private:
  std::string state_dir_;
};

ProcessResult run(std::vector<std::string> argv, const Env& env) {
  const std::string state_dir = fresh_state_dir();
  ProcessOptions options;
  options.argv = std::move(argv);
  options.env = {{"CUDA_VISIBLE_DEVICES", std::nullopt},
                 {"CUDA_DEVICE_ORDER", std::nullopt},
                 {"GPULAB_NODE", std::nullopt},
                 {"GPULAB_STATE_DIR", state_dir}};
  options.env.insert(options.env.end(), env.begin(), env.end());
  options.timeout_s = 60;
  ProcessResult result = run_process(options);
  std::error_code ignored;
  std::filesystem::remove_all(state_dir, ignored);
  INFO(options.argv[0] << " " << result.outcome(options.timeout_s) << "\nstdout:\n"
                       << result.out << "\nstderr:\n" << result.err);
  REQUIRE(result.ok());
  return result;
}

nlohmann::json parse(const ProcessResult& result) {
  INFO("stdout:\n" << result.out);
  auto json = nlohmann::json::parse(result.out, nullptr, /*allow_exceptions=*/false);
  REQUIRE_FALSE(json.is_discarded());
  return json;
}

}  // namespace

CATCH_REGISTER_LISTENER(InProcessEnvironment)

nlohmann::json probe(const Env& env, const std::vector<std::string>& steps, std::string* err) {
  std::vector<std::string> argv{bin_dir() + "/sim-probe"};
  argv.insert(argv.end(), steps.begin(), steps.end());
  const ProcessResult result = run(argv, env);
  if (err != nullptr) *err = result.err;
  auto results = parse(result);
  REQUIRE(results.size() == steps.size());
  return results;
}

nlohmann::json devices_report(const Env& env) { return parse(run({bin_dir() + "/gpulab", "devices", "--json"}, env)); }

std::vector<int> fastest_first(const Node& node) { return enumeration_order(node, DeviceOrder::FastestFirst); }

}  // namespace gpulab::test
