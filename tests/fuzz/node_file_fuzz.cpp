// Any text given as a node file either loads as a valid node or is rejected with a
// NodeError: never another exception, never a crash (docs/nodes.md).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "model/node.h"
#include "model/visibility.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  gpulab::Node node;
  try {
    node = gpulab::parse_node_file(text, "fuzz.json");
  } catch (const gpulab::NodeError&) {
    return 0;
  }
  // What load_node_file promises about a node that loads.
  if (node.gpus.empty() || node.gpus.size() > static_cast<std::size_t>(gpulab::kMaxGpus)) std::abort();
  for (const auto& gpu : node.gpus) {
    if (gpu.context_bytes >= gpu.total_bytes || gpu.sm_count < 1) std::abort();
    for (const auto& mig : gpu.mig)
      if (mig.total_bytes > gpu.total_bytes) std::abort();
  }
  // A node that loads can be used: every device of every order is a GPU of the node (or one
  // of its MIG instances), with memory its allocations fit in.
  for (const auto order : {gpulab::DeviceOrder::FastestFirst, gpulab::DeviceOrder::PciBusId})
    for (const auto& device : gpulab::visible_devices(node, std::nullopt, order)) {
      const auto& gpu = node.gpus.at(static_cast<std::size_t>(device.physical_index));
      if (device.mig_index < -1 || device.mig_index >= static_cast<int>(gpu.mig.size())) std::abort();
      const auto slice = device.mig_index < 0 ? gpu.total_bytes : gpu.mig[static_cast<std::size_t>(device.mig_index)].total_bytes;
      if (gpulab::total_bytes(node, device) != slice) std::abort();
      const auto capacity = gpulab::capacity_bytes(node, device);
      if (capacity == 0 || capacity > slice) std::abort();
    }
  return 0;
}
