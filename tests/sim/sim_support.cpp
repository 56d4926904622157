#include "sim_support.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <catch2/catch.hpp>

#include "in_process_environment.h"

#include "model/visibility.h"

namespace gpulab::test {
namespace {

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
