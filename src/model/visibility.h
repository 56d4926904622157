// CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER, as the CUDA driver applies them.
//
// Rules (see docs/reference.md, "Visibility"): entries are parsed like strtoul after
// leading whitespace; the first invalid or out-of-range entry ends the list; any duplicate
// empties it; GPU-/MIG- UUIDs and unique prefixes; one MIG instance at most.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/node.h"

namespace gpulab {

/// How CUDA numbers the GPUs it shows (`CUDA_DEVICE_ORDER`, docs/reference.md "Order").
enum class DeviceOrder {
  FastestFirst,  ///< the default: the fastest GPU first, the rest in PCI order
  PciBusId       ///< PCI bus order, nvidia-smi's
};

/// CUDA_DEVICE_ORDER's value; unset or unknown values mean FASTEST_FIRST, as in CUDA.
DeviceOrder parse_device_order(const char* value);
/// "FASTEST_FIRST" or "PCI_BUS_ID".
const char* to_string(DeviceOrder order);

/// A device the process can see, in CUDA index order.
struct VisibleDevice {
  int physical_index = -1;  ///< position in Node::gpus (nvidia-smi numbering)
  int mig_index = -1;       ///< index into Gpu::mig, or -1 for a whole GPU
};

/// CUDA's enumeration of all GPUs before CUDA_VISIBLE_DEVICES, as physical indices; what an
/// integer entry of the variable counts in. PCI_BUS_ID: PCI order. FASTEST_FIRST: the
/// node's observed `cuda_order` when it states one, else a heuristic after ethminer#283 —
/// the fastest GPU (highest compute capability, then most SMs; the first in PCI order among
/// equals) first, the rest in PCI order. The one place this order is decided: the simulator
/// and the tests both call it.
std::vector<int> enumeration_order(const Node& node, DeviceOrder order);

/// The devices CUDA exposes. `cuda_visible_devices` is the variable's value, or nullopt
/// when unset. A list that reaches a GPU in MIG mode (by index, GPU- UUID, or unset) shows
/// only that GPU's first MIG instance and drops every GPU not in MIG mode; MIG- entries
/// show at most one instance.
std::vector<VisibleDevice> visible_devices(const Node& node,
                                           const std::optional<std::string>& cuda_visible_devices,
                                           DeviceOrder order);

/// Why CUDA_VISIBLE_DEVICES shows fewer devices than it lists (an invalid, out-of-range
/// or repeated entry, a second MIG instance), in words; nullopt when every entry is honoured.
/// CUDA itself says nothing: it silently cuts the list.
std::optional<std::string> explain_visibility(const Node& node, const std::optional<std::string>& cuda_visible_devices,
                                              DeviceOrder order);

/// Total memory of a visible device as nvidia-smi shows it (a MIG instance has its own slice).
std::uint64_t total_bytes(const Node& node, const VisibleDevice& device);
/// cudaMemGetInfo's total for a visible device: what its allocations fit in.
std::uint64_t capacity_bytes(const Node& node, const VisibleDevice& device);

}  // namespace gpulab
