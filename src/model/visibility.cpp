// CUDA_VISIBLE_DEVICES parsing. The rules follow the CUDA Programming Guide plus the
// driver behaviour PyTorch encodes in torch.cuda._parse_visible_devices (tests in
// test/test_cuda_nvml_based_avail.py); see docs/reference.md for the sources.
#include "model/visibility.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string_view>
#include <tuple>
#include <utility>

namespace gpulab {
namespace {

std::vector<std::string> split_commas(const std::string& value) {
  std::vector<std::string> parts;
  std::string::size_type start = 0;
  while (true) {
    const auto comma = value.find(',', start);
    parts.push_back(value.substr(start, comma - start));
    if (comma == std::string::npos) return parts;
    start = comma + 1;
  }
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Like strtoul on an entry: an optional sign, then the leading digits ("1gpu2" -> 1,
// "+3" -> 3, "-0" -> 0). Returns -1 when the entry does not start with a number or the
// number is negative, which ends the list.
long long leading_integer(std::string_view entry) {
  std::size_t i = 0;
  bool negative = false;
  if (i < entry.size() && (entry[i] == '+' || entry[i] == '-')) negative = entry[i++] == '-';
  const std::size_t digits_start = i;
  long long value = 0;
  while (i < entry.size() && std::isdigit(static_cast<unsigned char>(entry[i]))) {
    value = std::min<long long>(value * 10 + (entry[i] - '0'), 1LL << 40);
    ++i;
  }
  if (i == digits_start) return -1;
  if (negative) return value == 0 ? 0 : -1;
  return value;
}

// Entries that start with `prefix`, up to the first that does not; a repeated entry
// empties the list.
std::vector<std::string> prefixed_entries(const std::string& value, std::string_view prefix) {
  std::vector<std::string> entries;
  for (const auto& entry : split_commas(value)) {
    if (std::find(entries.begin(), entries.end(), entry) != entries.end()) return {};
    if (!starts_with(entry, prefix)) break;
    entries.push_back(entry);
  }
  return entries;
}

// Index of the one candidate that `entry` is a prefix of; -1 if none or ambiguous.
template <typename Names>
int unique_prefix_match(const std::string& entry, const Names& names) {
  int match = -1;
  for (int i = 0; i < static_cast<int>(names.size()); ++i) {
    if (!starts_with(names[i], entry)) continue;
    if (match != -1) return -1;
    match = i;
  }
  return match;
}

std::vector<VisibleDevice> by_index(const Node& node, const std::string& value, DeviceOrder order) {
  std::vector<long long> indices;
  for (const auto& entry : split_commas(value)) {
    const long long index = leading_integer(trim(entry));
    if (std::find(indices.begin(), indices.end(), index) != indices.end()) return {};
    if (index < 0) break;
    indices.push_back(index);
  }
  const auto enumeration = enumeration_order(node, order);
  std::vector<VisibleDevice> devices;
  for (const long long index : indices) {
    if (index >= static_cast<long long>(enumeration.size())) break;
    devices.push_back({enumeration[static_cast<std::size_t>(index)], -1});
  }
  return devices;
}

std::vector<VisibleDevice> by_gpu_uuid(const Node& node, const std::string& value) {
  std::vector<std::string> uuids;
  for (const auto& gpu : node.gpus) uuids.push_back(gpu.uuid);
  std::vector<VisibleDevice> devices;
  for (const auto& entry : prefixed_entries(value, "GPU-")) {
    const int physical = unique_prefix_match(entry, uuids);
    if (physical < 0) break;
    for (const auto& seen : devices)
      if (seen.physical_index == physical) return {};
    devices.push_back({physical, -1});
  }
  return devices;
}

// The legacy form MIG-<GPU UUID or a unique prefix of it>/<gi>/<ci> (nvitop resolves
// MIG-GPU-3eb79704/13/0): the target's index, or -1.
int legacy_mig_match(const Node& node, const std::string& entry, const std::vector<VisibleDevice>& targets) {
  const auto first_slash = entry.find('/');
  const auto second_slash = first_slash == std::string::npos ? first_slash : entry.find('/', first_slash + 1);
  if (!starts_with(entry, "MIG-GPU-") || second_slash == std::string::npos) return -1;
  const std::string gpu_prefix = entry.substr(4, first_slash - 4);
  const std::string gi = entry.substr(first_slash + 1, second_slash - first_slash - 1);
  const std::string ci = entry.substr(second_slash + 1);
  std::vector<std::string> uuids;
  for (const auto& gpu : node.gpus) uuids.push_back(gpu.uuid);
  const int physical = unique_prefix_match(gpu_prefix, uuids);
  if (physical < 0) return -1;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    if (targets[i].physical_index != physical) continue;
    const auto& mig = node.gpus[static_cast<std::size_t>(physical)].mig[static_cast<std::size_t>(targets[i].mig_index)];
    if (std::to_string(mig.gpu_instance) == gi && std::to_string(mig.compute_instance) == ci) return static_cast<int>(i);
  }
  return -1;
}

// MIG-<GPU UUID>/<gi>/<ci> (a unique prefix of the GPU UUID too) or (a unique prefix of)
// MIG-<uuid>.
std::vector<VisibleDevice> by_mig(const Node& node, const std::string& value) {
  std::vector<std::string> names;
  std::vector<VisibleDevice> targets;
  for (int g = 0; g < static_cast<int>(node.gpus.size()); ++g) {
    const auto& gpu = node.gpus[static_cast<std::size_t>(g)];
    for (int m = 0; m < static_cast<int>(gpu.mig.size()); ++m) {
      names.push_back(gpu.mig[static_cast<std::size_t>(m)].uuid);
      targets.push_back({g, m});
    }
  }
  std::vector<VisibleDevice> devices;
  for (const auto& entry : prefixed_entries(value, "MIG-")) {
    int match = legacy_mig_match(node, entry, targets);
    if (match < 0) match = unique_prefix_match(entry, names);
    if (match < 0) break;
    for (const auto& seen : devices)
      if (seen.physical_index == targets[static_cast<std::size_t>(match)].physical_index &&
          seen.mig_index == targets[static_cast<std::size_t>(match)].mig_index)
        return {};
    devices.push_back(targets[static_cast<std::size_t>(match)]);
  }
  // A CUDA process can enumerate a single MIG instance (CUDA MIG user guide).
  if (devices.size() > 1) devices.resize(1);
  return devices;
}

}  // namespace

DeviceOrder parse_device_order(const char* value) {
  if (value != nullptr && std::strcmp(value, "PCI_BUS_ID") == 0) return DeviceOrder::PciBusId;
  return DeviceOrder::FastestFirst;
}

const char* to_string(DeviceOrder order) {
  return order == DeviceOrder::PciBusId ? "PCI_BUS_ID" : "FASTEST_FIRST";
}

std::vector<int> enumeration_order(const Node& node, DeviceOrder order) {
  std::vector<int> physical(node.gpus.size());
  for (std::size_t i = 0; i < physical.size(); ++i) physical[i] = static_cast<int>(i);
  if (order != DeviceOrder::FastestFirst || physical.empty()) return physical;
  if (!node.cuda_order.empty()) return node.cuda_order;  // observed on the machine itself
  // The heuristic is undocumented. Observed (ethminer#283): the fastest GPU first, the rest
  // in PCI order. "Fastest" here: the highest compute capability, then the most SMs; the
  // first in PCI order among equals.
  const auto speed = [&](int p) {
    const Gpu& gpu = node.gpus[static_cast<std::size_t>(p)];
    return std::make_tuple(gpu.cc_major, gpu.cc_minor, gpu.sm_count);
  };
  int fastest = 0;
  for (const int p : physical)
    if (speed(p) > speed(fastest)) fastest = p;
  std::rotate(physical.begin(), physical.begin() + fastest, physical.begin() + fastest + 1);
  return physical;
}

namespace {
// A MIG-enabled GPU is never a whole GPU to CUDA (nvitop's model, docs/reference.md "Visibility"): once the
// list reaches one, only the first MIG instance of the first such GPU that has one is
// visible, and every GPU not in MIG mode is dropped.
std::vector<VisibleDevice> apply_mig_mode(const Node& node, const std::vector<VisibleDevice>& devices) {
  bool reaches_mig = false;
  for (const auto& device : devices) {
    const Gpu& gpu = node.gpus[static_cast<std::size_t>(device.physical_index)];
    if (device.mig_index >= 0) return devices;  // MIG- entries: by_mig already kept one
    if (!gpu.mig_mode) continue;
    reaches_mig = true;
    if (!gpu.mig.empty()) return {{device.physical_index, 0}};
  }
  return reaches_mig ? std::vector<VisibleDevice>{} : devices;
}

// The devices the list names, before MIG mode hides whole GPUs.
std::vector<VisibleDevice> listed_devices(const Node& node, const std::optional<std::string>& cuda_visible_devices,
                                          DeviceOrder order) {
  if (!cuda_visible_devices) {
    std::vector<VisibleDevice> all;
    for (const int physical : enumeration_order(node, order)) all.push_back({physical, -1});
    return all;
  }
  const std::string& value = *cuda_visible_devices;
  if (starts_with(value, "GPU-")) return by_gpu_uuid(node, value);
  if (starts_with(value, "MIG-")) return by_mig(node, value);
  return by_index(node, value, order);
}
}  // namespace

std::vector<VisibleDevice> visible_devices(const Node& node,
                                           const std::optional<std::string>& cuda_visible_devices,
                                           DeviceOrder order) {
  return apply_mig_mode(node, listed_devices(node, cuda_visible_devices, order));
}

std::uint64_t total_bytes(const Node& node, const VisibleDevice& device) {
  const auto& gpu = node.gpus.at(static_cast<std::size_t>(device.physical_index));
  if (device.mig_index >= 0) return gpu.mig.at(static_cast<std::size_t>(device.mig_index)).total_bytes;
  return gpu.total_bytes;
}

std::uint64_t capacity_bytes(const Node& node, const VisibleDevice& device) {
  const auto& gpu = node.gpus.at(static_cast<std::size_t>(device.physical_index));
  if (device.mig_index >= 0) return gpu.mig.at(static_cast<std::size_t>(device.mig_index)).capacity_bytes;
  return gpu.capacity_bytes;
}

}  // namespace gpulab

namespace gpulab {
namespace {
std::optional<std::string> explain_mig_mode(const Node& node, const std::vector<VisibleDevice>& listed) {
  for (const auto& device : listed) {
    const Gpu& gpu = node.gpus[static_cast<std::size_t>(device.physical_index)];
    if (device.mig_index >= 0 || !gpu.mig_mode || gpu.mig.empty()) continue;
    return "GPU " + std::to_string(device.physical_index) + " is in MIG mode: CUDA shows only its first MIG instance (" + gpu.mig.front().uuid +
           ") and hides every GPU that is not in MIG mode";
  }
  for (const auto& device : listed)
    if (device.mig_index < 0 && node.gpus[static_cast<std::size_t>(device.physical_index)].mig_mode)
      return std::string("the GPUs listed are in MIG mode without MIG instances: CUDA shows no device");
  return std::nullopt;
}
}  // namespace

// Finds the first entry where CUDA stops honouring the list by growing the list one entry
// at a time through visible_devices(), so the explanation cannot drift from the rules.
std::optional<std::string> explain_visibility(const Node& node, const std::optional<std::string>& value,
                                              DeviceOrder order) {
  if (const auto mig = explain_mig_mode(node, listed_devices(node, value, order))) return mig;
  if (!value) return std::nullopt;
  if (value->empty()) return std::string("CUDA_VISIBLE_DEVICES is empty: CUDA hides every GPU");
  const auto entries = split_commas(*value);
  std::string prefix;
  std::size_t previous = 0;
  for (std::size_t k = 0; k < entries.size(); ++k) {
    prefix += (k == 0 ? "" : ",") + entries[k];
    const std::size_t visible = visible_devices(node, prefix, order).size();
    if (visible == k + 1) {
      previous = visible;
      continue;
    }
    const std::string quoted = "'" + entries[k] + "'";
    if (visible == 0 && previous > 0)
      return "entry " + quoted + " repeats an earlier one: a list with a duplicate hides every GPU";
    if (visible == previous && starts_with(entries[0], "MIG-") && previous == 1)
      return std::string("a process can use only one MIG instance: CUDA shows the first and ignores the rest");
    std::string why = "is not a GPU index, GPU- UUID or MIG- UUID";
    const long long index = leading_integer(trim(entries[k]));
    if (starts_with(entries[0], "GPU-") || starts_with(entries[0], "MIG-")) {
      why = "matches no GPU of this node, or several (a UUID prefix must be unique)";
    } else if (index >= static_cast<long long>(node.gpus.size())) {
      why = "names GPU " + std::to_string(index) + ", but this node has " + std::to_string(node.gpus.size()) +
            " (0 to " + std::to_string(node.gpus.size() - 1) + ")";
    } else if (index == -1 && !trim(entries[k]).empty() && trim(entries[k])[0] == '-') {
      why = "is negative";
    }
    const std::string rest = k + 1 < entries.size() ? " and every entry after it" : "";
    return "entry " + quoted + " " + why + ": CUDA ignores it" + rest +
           (visible == 0 ? ", so no GPU is visible" : "");
  }
  return std::nullopt;
}

}  // namespace gpulab
