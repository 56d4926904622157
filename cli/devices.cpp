// gpulab devices: what CUDA shows this process under the current environment.
#include <cstdlib>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "gpulab/observe.h"
#include "gpulab/profile.h"
#include "gpulab/visibility.h"

namespace gpulab::cli {
namespace {

struct DevicesOptions {
  bool json = false;
};

nlohmann::json env_or_null(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? nlohmann::json(value) : nlohmann::json(nullptr);
}

void run_devices(const DevicesOptions& options) {
  auto observer = make_observer();
  const int count = observer->cuda_device_count();  // initialises CUDA, like any CUDA program
  const auto gpus = observer->gpus();
  nlohmann::json devices = nlohmann::json::array();
  for (int index = 0; index < count; ++index) {
    const int physical = observer->physical_index(index);
    const GpuView& gpu = gpus.at(static_cast<std::size_t>(physical));
    devices.push_back({{"cuda_index", index},
                       {"physical_index", physical},
                       {"name", gpu.name},
                       {"uuid", gpu.uuid},
                       {"pci_bus_id", gpu.pci_bus_id},
                       {"total_bytes", gpu.total_bytes}});
  }
  std::optional<std::string> visible_env;
  if (const char* value = std::getenv("CUDA_VISIBLE_DEVICES")) visible_env = value;
  const auto note = observer->backend() == "sim"
                        ? explain_visibility(load_selected_node(), visible_env, parse_device_order(std::getenv("CUDA_DEVICE_ORDER")))
                        : std::nullopt;
  const Profile profile = active_profile();
  nlohmann::json report = {
      {"backend", observer->backend()},
      {"node", observer->node()},
      {"profile", {{"torch", profile.torch_version()}, {"cuda_runtime", profile.cuda_runtime}}},
      {"cuda_visible_devices", env_or_null("CUDA_VISIBLE_DEVICES")},
      {"device_order", to_string(parse_device_order(std::getenv("CUDA_DEVICE_ORDER")))},
      {"physical_gpus", gpus.size()},
      {"devices", devices}};
  if (note) report["note"] = *note;
  if (options.json) {
    std::cout << report.dump(2) << '\n';
    return;
  }
  std::cout << fmt::format("node {} ({} backend): {} physical GPUs, {} visible to CUDA\n", observer->node(),
                           observer->backend(), gpus.size(), count);
  std::cout << fmt::format("profile: PyTorch {} on CUDA {}\n", profile.torch_version(), profile.cuda_runtime);
  std::cout << fmt::format("CUDA_VISIBLE_DEVICES={}  CUDA_DEVICE_ORDER={}\n\n",
                           report["cuda_visible_devices"].is_null() ? "(unset)" : report["cuda_visible_devices"].get<std::string>(),
                           report["device_order"].get<std::string>());
  if (note) std::cout << "note: " << *note << "\n\n";
  if (count == 0) std::cout << "No CUDA device is visible: torch::cuda::is_available() is false.\n";
  else std::cout << fmt::format("{:<8} {:<10} {:<26} {:<18} {}\n", "CUDA", "physical", "name", "PCI bus id", "UUID");
  for (const auto& d : devices)
    std::cout << fmt::format("{:<8} {:<10} {:<26} {:<18} {}\n", fmt::format("cuda:{}", d["cuda_index"].get<int>()),
                             fmt::format("GPU {}", d["physical_index"].get<int>()), d["name"].get<std::string>(),
                             d["pci_bus_id"].get<std::string>(), d["uuid"].get<std::string>());
}

}  // namespace

void setup_devices(CLI::App& app) {
  auto options = std::make_shared<DevicesOptions>();
  auto* cmd = app.add_subcommand("devices", "CUDA devices this environment makes visible, and which physical GPU each is");
  cmd->add_flag("--json", options->json, "machine-readable output");
  cmd->callback([options] { run_devices(*options); });
}

}  // namespace gpulab::cli
