// `gpulab devices`' table and JSON document (view/devices.h).
#include "view/devices.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace gpulab::view {

std::string render_devices_table(const DevicesListing& listing) {
  std::string out = fmt::format("node {} ({} backend): {} physical GPUs, {} visible to CUDA\n", listing.node, backend_name(listing.backend),
                                listing.physical_gpus, listing.devices.size());
  out += fmt::format("profile: {}\n", listing.profile.name());
  out += fmt::format("CUDA_VISIBLE_DEVICES={}  CUDA_DEVICE_ORDER={}\n\n", listing.cuda_visible_devices.value_or("(unset)"),
                     to_string(listing.device_order));
  if (listing.nvidia_visible_devices)
    out += fmt::format("container: NVIDIA_VISIBLE_DEVICES={}: {} of the host's GPUs, numbered from 0 inside\n\n",
                       *listing.nvidia_visible_devices, listing.container_gpus);
  if (listing.note) out += "note: " + *listing.note + "\n\n";
  const bool container = listing.nvidia_visible_devices.has_value();
  if (listing.devices.empty()) out += "No CUDA device is visible: torch::cuda::is_available() is false.\n";
  else if (container)
    out += fmt::format("{:<8} {:<10} {:<9} {:<26} {:<18} {}\n", "CUDA", "container", "host", "name", "PCI bus id", "UUID");
  else out += fmt::format("{:<8} {:<10} {:<26} {:<18} {}\n", "CUDA", "physical", "name", "PCI bus id", "UUID");
  for (const CudaDeviceRow& d : listing.devices) {
    if (container)
      out += fmt::format("{:<8} {:<10} {:<9} {:<26} {:<18} {}\n", fmt::format("cuda:{}", d.cuda_index),
                         fmt::format("GPU {}", d.container_index), fmt::format("GPU {}", d.physical_index), d.name,
                         d.pci_bus_id, d.uuid);
    else
      out += fmt::format("{:<8} {:<10} {:<26} {:<18} {}\n", fmt::format("cuda:{}", d.cuda_index),
                         fmt::format("GPU {}", d.physical_index), d.name, d.pci_bus_id, d.uuid);
  }
  return out;
}

std::string render_devices_json(const DevicesListing& listing) {
  nlohmann::json devices = nlohmann::json::array();
  for (const CudaDeviceRow& d : listing.devices)
    devices.push_back({{"cuda_index", d.cuda_index},
                       {"physical_index", d.physical_index},
                       {"container_index", d.container_index < 0 ? nlohmann::json(nullptr) : nlohmann::json(d.container_index)},
                       {"name", d.name},
                       {"uuid", d.uuid},
                       {"pci_bus_id", d.pci_bus_id},
                       {"total_bytes", d.total_bytes}});
  nlohmann::json report = {
      {"backend", backend_name(listing.backend)},
      {"node", listing.node},
      {"profile", profile_to_json(listing.profile)},
      {"cuda_visible_devices", listing.cuda_visible_devices ? nlohmann::json(*listing.cuda_visible_devices) : nlohmann::json(nullptr)},
      {"device_order", to_string(listing.device_order)},
      {"physical_gpus", listing.physical_gpus},
      {"devices", devices}};
  if (listing.nvidia_visible_devices) {
    report["nvidia_visible_devices"] = *listing.nvidia_visible_devices;
    report["container_gpus"] = listing.container_gpus;
  }
  if (listing.note) report["note"] = *listing.note;
  return report.dump(2) + "\n";
}

}  // namespace gpulab::view
