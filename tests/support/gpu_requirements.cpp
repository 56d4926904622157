#include "gpu_requirements.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <mutex>
#include <stdexcept>

#include "proc/process.h"

namespace gpulab::test {
namespace {

std::optional<std::string> value_in(const Env& env, const std::string& name) {
  std::optional<std::string> value;
  for (const auto& [key, v] : env)
    if (key == name) value = v;  // the last setting wins, as in run_scenario
  return value;
}

GpuInventory ask_smi(const Env& env);

// On the simulated node the inventory is the node file; only real GPUs need asking.
GpuInventory ask(const Env& env) {
  if (backend_named(GPULAB_TEST_BACKEND) == Backend::kSim) {
    const Node described = node(value_in(env, "GPULAB_NODE").value_or(kDefaultNodeName));
    return {Backend::kSim, described.name, static_cast<int>(described.gpus.size())};
  }
  return ask_smi(env);
}

GpuInventory ask_smi(const Env& env) {
  ProcessOptions options;
  options.argv = {bin_dir() + "/gpulab", "smi", "--json"};
  options.env = {{"CUDA_VISIBLE_DEVICES", std::nullopt}, {"GPULAB_STATE_DIR", fresh_state_dir()}};
  if (const auto node = value_in(env, "GPULAB_NODE")) options.env.emplace_back("GPULAB_NODE", *node);
  options.timeout_s = 60;
  const ProcessResult result = run_process(options);
  if (!result.ok())
    throw std::runtime_error("gpulab smi --json " + result.outcome(options.timeout_s) + ":\n" + result.err);
  const auto report = nlohmann::json::parse(result.out);
  const auto backend = backend_named(report.at("backend").get<std::string>());
  if (!backend) throw std::runtime_error("gpulab smi --json names no known backend:\n" + result.out);
  return {*backend, report.at("node").get<std::string>(),
          static_cast<int>(report.at("gpus").size())};
}

}  // namespace

const GpuInventory& gpu_inventory(const Env& env) {
  static std::mutex mutex;
  static std::map<std::string, GpuInventory> cache;
  const std::string key = value_in(env, "GPULAB_NODE").value_or("");
  std::lock_guard<std::mutex> lock(mutex);
  auto found = cache.find(key);
  if (found == cache.end()) found = cache.emplace(key, ask(env)).first;
  return found->second;
}

int gpus_needed(const Env& env) {
  int needed = 1;
  const auto visible = value_in(env, "CUDA_VISIBLE_DEVICES");
  if (!visible) return needed;
  std::size_t start = 0;
  while (start <= visible->size()) {
    const std::size_t end = std::min(visible->find(',', start), visible->size());
    const std::string entry = visible->substr(start, end - start);
    std::size_t i = 0;
    while (i < entry.size() && std::isspace(static_cast<unsigned char>(entry[i]))) ++i;
    if (i < entry.size() && entry[i] == '+') ++i;
    if (i >= entry.size() || !std::isdigit(static_cast<unsigned char>(entry[i]))) break;  // ends the list
    needed = std::max(needed, std::atoi(entry.c_str() + i) + 1);
    start = end + 1;
  }
  return needed;
}

std::optional<std::string> missing_gpus(int needed, const Env& env) {
  const GpuInventory& inventory = gpu_inventory(env);
  if (inventory.physical_gpus >= needed) return std::nullopt;
  return "needs " + std::to_string(needed) + (needed == 1 ? " GPU" : " GPUs") + ", found " +
         std::to_string(inventory.physical_gpus) + " (" + backend_name(inventory.backend) + " backend, " + inventory.node + ")";
}

}  // namespace gpulab::test
