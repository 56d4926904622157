// CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER against real node files: whatever the value,
// the devices CUDA exposes follow the rules' shape (src/model/visibility.cpp,
// docs/reference.md "Visibility"):
//   * every device is a GPU (and MIG instance) of the node, and none appears twice;
//   * a MIG instance is never seen next to another device (one instance per process, and
//     reaching a GPU in MIG mode hides every whole GPU);
//   * unset shows every GPU of a node without MIG mode, and one instance at most otherwise;
//   * CUDA honours a leading run of the entries and cuts the rest, so a non-empty result of
//     whole GPUs is also what the first |result| entries alone give, and never longer than
//     the list;
//   * explain_visibility() speaks whenever an entry is not honoured, and for whole GPUs it
//     is silent when every entry is (MIG mode always earns a note: it changes what an
//     entry means).
// Input: byte 0 picks the node, the CUDA_DEVICE_ORDER value and whether the variable is
// set at all; the remaining bytes are CUDA_VISIBLE_DEVICES.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "model/node.h"
#include "model/visibility.h"

namespace {

const std::vector<gpulab::Node>& nodes() {
  static const std::vector<gpulab::Node> loaded = [] {
    std::vector<gpulab::Node> list;
    for (const char* name : {"dgx-a100", "workstation-mixed", "mig-a100", "tiny2"})
      list.push_back(gpulab::load_node_file(std::string(GPULAB_TEST_SOURCE_DIR) + "/nodes/" + name + ".json"));
    return list;
  }();
  return loaded;
}

// CUDA_DEVICE_ORDER as the driver reads it: unset, either valid value, or something else.
const char* const kOrders[] = {nullptr, "PCI_BUS_ID", "FASTEST_FIRST", "pci_bus_id"};

std::vector<std::string> entries(const std::string& value) {
  std::vector<std::string> parts;
  std::string::size_type start = 0;
  while (true) {
    const auto comma = value.find(',', start);
    parts.push_back(value.substr(start, comma - start));
    if (comma == std::string::npos) return parts;
    start = comma + 1;
  }
}

std::string first_entries(const std::vector<std::string>& parts, std::size_t count) {
  std::string joined;
  for (std::size_t i = 0; i < count; ++i) joined += (i == 0 ? "" : ",") + parts[i];
  return joined;
}

bool same(const std::vector<gpulab::VisibleDevice>& a, const std::vector<gpulab::VisibleDevice>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].physical_index != b[i].physical_index || a[i].mig_index != b[i].mig_index) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const unsigned selector = data[0];
  const gpulab::Node& node = nodes()[selector % nodes().size()];
  const gpulab::DeviceOrder order = gpulab::parse_device_order(kOrders[(selector / 4) % 4]);
  const bool unset = (selector / 16) % 8 == 7;  // one value in eight: the variable is unset
  const std::optional<std::string> value =
      unset ? std::nullopt : std::optional<std::string>(std::string(reinterpret_cast<const char*>(data) + 1, size - 1));

  const auto devices = gpulab::visible_devices(node, value, order);
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const auto& device = devices[i];
    if (device.physical_index < 0 || device.physical_index >= static_cast<int>(node.gpus.size())) std::abort();
    const auto& gpu = node.gpus[static_cast<std::size_t>(device.physical_index)];
    if (device.mig_index < -1 || device.mig_index >= static_cast<int>(gpu.mig.size())) std::abort();
    if (gpulab::total_bytes(node, device) == 0) std::abort();
    for (std::size_t j = 0; j < i; ++j)
      if (devices[j].physical_index == device.physical_index && devices[j].mig_index == device.mig_index) std::abort();
  }
  bool shows_mig = false;
  for (const auto& device : devices) shows_mig = shows_mig || device.mig_index >= 0;
  if (shows_mig && devices.size() != 1) std::abort();
  bool node_has_mig_mode = false;
  for (const auto& gpu : node.gpus) node_has_mig_mode = node_has_mig_mode || gpu.mig_mode;

  const auto explanation = gpulab::explain_visibility(node, value, order);
  if (!value) {
    if (!node_has_mig_mode && (devices.size() != node.gpus.size() || explanation)) std::abort();
    if (node_has_mig_mode && devices.size() > 1) std::abort();
    return 0;
  }
  const auto parts = entries(*value);
  if (devices.size() > parts.size()) std::abort();
  const bool every_entry_honoured = devices.size() == parts.size() && !value->empty();
  if (!every_entry_honoured && !explanation) std::abort();
  if (shows_mig) return 0;
  if (!devices.empty() && !same(gpulab::visible_devices(node, first_entries(parts, devices.size()), order), devices))
    std::abort();
  if (every_entry_honoured && explanation) std::abort();
  return 0;
}
