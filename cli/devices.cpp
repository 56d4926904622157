// gpulab devices: what CUDA shows this process under the current environment.
#include <cstdlib>
#include <iostream>

#include "commands.h"
#include "gpulab/observe.h"
#include "model/container.h"
#include "model/profile.h"
#include "model/visibility.h"
#include "view/devices.h"
#include "backend/backend.h"

namespace gpulab::cli {
namespace {

void run_devices(bool json) {
  auto observer = make_observer();
  // The container's GPUs (simulated node only: on real GPUs the runtime already applied it).
  std::optional<ContainerView> container;
  if (observer->backend() == Backend::kSim) container = current_container_view(load_selected_node());
  const int count = observer->cuda_device_count();  // initialises CUDA, like any CUDA program
  const auto gpus = observer->gpus();
  view::DevicesListing listing;
  for (int index = 0; index < count; ++index) {
    const int physical = observer->physical_index(index);
    const GpuView& gpu = gpus.at(static_cast<std::size_t>(physical));
    const int inside = container ? container->container_index(physical) : -1;
    listing.devices.push_back({index, physical, gpu.name, gpu.uuid, gpu.pci_bus_id, gpu.total_bytes, inside});
  }
  if (const char* value = std::getenv("CUDA_VISIBLE_DEVICES")) listing.cuda_visible_devices = value;
  listing.device_order = parse_device_order(std::getenv("CUDA_DEVICE_ORDER"));
  if (container) {
    listing.note = explain_visibility(load_selected_node(), *container, listing.cuda_visible_devices, listing.device_order);
    if (container->in_container()) {
      listing.nvidia_visible_devices = container->value.value_or("");
      listing.container_gpus = container->host_gpus.size();
    }
  }
  listing.profile = active_profile();
  listing.backend = observer->backend();
  listing.node = observer->node();
  listing.physical_gpus = gpus.size();
  std::cout << (json ? view::render_devices_json(listing) : view::render_devices_table(listing));
}

}  // namespace

void setup_devices(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("devices", "CUDA devices this environment makes visible, and which physical GPU each is");
  cmd->add_flag("--json", *json, "machine-readable output");
  cmd->callback([json] { run_devices(*json); });
}

}  // namespace gpulab::cli
