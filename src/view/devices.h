// What `gpulab devices` prints, rendered to strings: the CUDA devices this environment makes
// visible and the physical GPU behind each, as a table or a JSON document.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpulab/observe.h"
#include "model/profile.h"
#include "model/visibility.h"

namespace gpulab::view {

/// One CUDA device of the process and the physical GPU it is.
struct CudaDeviceRow {
  int cuda_index = 0;
  int physical_index = 0;  ///< the host's nvidia-smi index
  std::string name;
  std::string uuid;
  std::string pci_bus_id;
  std::uint64_t total_bytes = 0;
  int container_index = -1;  ///< nvidia-smi's index inside the container; -1 outside one
};

/// Everything `gpulab devices` shows.
struct DevicesListing {
  Backend backend = Backend::kSim;
  std::string node;     ///< the simulated node, or the host name on real GPUs
  Profile profile;
  std::optional<std::string> cuda_visible_devices;  ///< nullopt: unset
  /// NVIDIA_VISIBLE_DEVICES, the container's GPUs (simulated node only); nullopt: unset, no container.
  std::optional<std::string> nvidia_visible_devices;
  std::size_t container_gpus = 0;  ///< the GPUs the container has (with nvidia_visible_devices)
  DeviceOrder device_order = DeviceOrder::FastestFirst;
  std::size_t physical_gpus = 0;
  std::vector<CudaDeviceRow> devices;  ///< in CUDA index order
  std::optional<std::string> note;     ///< where CUDA cut CUDA_VISIBLE_DEVICES short, and why
};

/// The table: node and counts, profile, the two variables, the note, a row per CUDA device
/// (or a line saying none is visible).
std::string render_devices_table(const DevicesListing& listing);
/// The JSON document (`gpulab devices --json`), with its newline.
std::string render_devices_json(const DevicesListing& listing);

}  // namespace gpulab::view
