// gpulab smi: the node as nvidia-smi shows it — physical GPUs and the processes on them.
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "gpulab/observe.h"
#include "gpulab/profile.h"

namespace gpulab::cli {
namespace {

struct SmiOptions {
  bool json = false;
};

std::string mib(std::uint64_t bytes) { return fmt::format("{}MiB", bytes / (1024 * 1024)); }

std::string bar(std::uint64_t used, std::uint64_t total) {
  constexpr int kWidth = 20;
  // Clamped to the bar: a count past it would make the second string's length negative.
  const int filled = total == 0 || used >= total ? (used == 0 ? 0 : kWidth)
                                                 : static_cast<int>((used * kWidth + total - 1) / total);
  return "[" + std::string(static_cast<std::size_t>(filled), '#') + std::string(static_cast<std::size_t>(kWidth - filled), '.') + "]";
}

void run_smi(const SmiOptions& options) {
  auto observer = make_observer();  // reads the node state only: CUDA stays uninitialised
  const auto gpus = observer->gpus();
  const Profile profile = active_profile();
  if (options.json) {
    nlohmann::json out = {{"backend", observer->backend()},
                          {"node", observer->node()},
                          {"profile", {{"torch", profile.torch_version()}, {"cuda_runtime", profile.cuda_runtime}}},
                          {"gpus", nlohmann::json::array()}};
    for (const GpuView& gpu : gpus) {
      nlohmann::json processes = nlohmann::json::array();
      for (const auto& p : gpu.processes) {
        nlohmann::json row = {{"pid", p.pid}, {"name", p.name}, {"used_bytes", p.used_bytes}};
        if (p.gpu_instance >= 0) {  // NVML's gpuInstanceId / computeInstanceId on a MIG GPU
          row["gpu_instance"] = p.gpu_instance;
          row["compute_instance"] = p.compute_instance;
        }
        processes.push_back(std::move(row));
      }
      out["gpus"].push_back({{"physical_index", gpu.physical_index},
                             {"uuid", gpu.uuid},
                             {"name", gpu.name},
                             {"pci_bus_id", gpu.pci_bus_id},
                             {"total_bytes", gpu.total_bytes},
                             {"used_bytes", gpu.used_bytes},
                             {"processes", processes}});
    }
    std::cout << out.dump(2) << '\n';
    return;
  }
  std::cout << fmt::format("gpulab smi — node {} ({} backend), profile: PyTorch {} on CUDA {}\n", observer->node(),
                           observer->backend(), profile.torch_version(), profile.cuda_runtime);
  std::cout << fmt::format("{:<4} {:<26} {:<18} {:>22}  {}\n", "GPU", "Name", "Bus-Id", "Memory-Usage", "");
  for (const GpuView& gpu : gpus)
    std::cout << fmt::format("{:<4} {:<26} {:<18} {:>22}  {}\n", gpu.physical_index, gpu.name, gpu.pci_bus_id,
                             fmt::format("{} / {}", mib(gpu.used_bytes), mib(gpu.total_bytes)),
                             bar(gpu.used_bytes, gpu.total_bytes));
  std::cout << fmt::format("\nProcesses:\n{:<4} {:>8}  {:<24} {:>12}\n", "GPU", "PID", "Process name", "GPU Memory");
  bool any = false;
  for (const GpuView& gpu : gpus)
    for (const auto& p : gpu.processes) {
      std::cout << fmt::format("{:<4} {:>8}  {:<24} {:>12}\n", gpu.physical_index, p.pid, p.name, mib(p.used_bytes));
      any = true;
    }
  if (!any) std::cout << "  No running processes found\n";
}

}  // namespace

void setup_smi(CLI::App& app) {
  auto options = std::make_shared<SmiOptions>();
  auto* cmd = app.add_subcommand("smi", "nvidia-smi's view of the node: memory per physical GPU and per process");
  cmd->add_flag("--json", options->json, "machine-readable output");
  cmd->callback([options] { run_smi(*options); });
}

}  // namespace gpulab::cli
