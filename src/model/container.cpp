// NVIDIA_VISIBLE_DEVICES as NVIDIA's container stack applies it. The toolkit's reading:
// nvidia-container-toolkit internal/config/image/cuda_image.go (devicesFromEnvvars) and
// devices.go (NewVisibleDevices); the device selection: libnvidia-container
// src/cli/common.c (select_devices, select_gpu_device, select_mig_device).
#include "model/container.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace gpulab {
namespace {

std::string trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

bool iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

bool iprefix(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && iequal(s.substr(0, prefix.size()), prefix);
}

// The toolkit's entries: split at commas, trimmed, empty ones dropped.
std::vector<std::string> toolkit_entries(const std::string& value) {
  std::vector<std::string> entries;
  std::string::size_type start = 0;
  while (true) {
    const auto comma = value.find(',', start);
    std::string entry = trimmed(std::string_view(value).substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (!entry.empty()) entries.push_back(std::move(entry));
    if (comma == std::string::npos) return entries;
    start = comma + 1;
  }
}

// strtoumax over the whole entry, as select_gpu_device: an optional sign, then digits only.
// -1 when it is not a number or names no GPU ("-1" wraps to UINTMAX_MAX there).
long long whole_index(const std::string& entry) {
  std::size_t i = 0;
  bool negative = false;
  if (i < entry.size() && (entry[i] == '+' || entry[i] == '-')) negative = entry[i++] == '-';
  if (i == entry.size()) return -1;
  long long value = 0;
  for (; i < entry.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(entry[i]))) return -1;
    value = std::min<long long>(value * 10 + (entry[i] - '0'), 1LL << 40);
  }
  return negative && value != 0 ? -1 : value;
}

// sscanf(dev, "%x:%02x:%02x.0") as matches_pci_format: domain, bus and device, or nullopt.
std::optional<std::string> pci_form(const std::string& entry) {
  unsigned domain = 0, bus = 0, device = 0;
  if (std::sscanf(entry.c_str(), "%x:%2x:%2x.0", &domain, &bus, &device) != 3) return std::nullopt;
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%08x:%02x:%02x.0", domain, bus, device);
  return std::string(buffer);
}

struct Selection {
  std::vector<bool> whole;                 // per host GPU
  std::vector<std::vector<int>> mig;       // per host GPU: MIG instances named
};

// One entry of the list, as select_gpu_device then select_mig_device try it; false: unknown.
bool select_entry(const Node& host, const std::string& entry, Selection& selected) {
  const std::size_t n = host.gpus.size();
  const auto add_gpu = [&](std::size_t g) {
    selected.whole[g] = true;
    return true;
  };
  const auto add_mig = [&](std::size_t g, int m) {
    auto& named = selected.mig[g];
    if (std::find(named.begin(), named.end(), m) == named.end()) named.push_back(m);
    return true;
  };
  if (iprefix(entry, "GPU-") && entry.size() > 4)  // a full UUID, any case
    for (std::size_t g = 0; g < n; ++g)
      if (iequal(host.gpus[g].uuid, entry)) return add_gpu(g);
  if (const auto pci = pci_form(entry))
    for (std::size_t g = 0; g < n; ++g)
      if (iprefix(host.gpus[g].pci_bus_id, *pci)) return add_gpu(g);
  if (const long long index = whole_index(entry); index >= 0 && index < static_cast<long long>(n))
    return add_gpu(static_cast<std::size_t>(index));
  if (iprefix(entry, "MIG-") && entry.size() > 4)
    for (std::size_t g = 0; g < n; ++g)
      for (std::size_t m = 0; m < host.gpus[g].mig.size(); ++m)
        if (iequal(host.gpus[g].mig[m].uuid, entry)) return add_mig(g, static_cast<int>(m));
  unsigned long g = 0, m = 0;  // GPU:MIG, as sscanf("%lu:%lu") reads it
  if (std::sscanf(entry.c_str(), "%lu:%lu", &g, &m) == 2 && g < n && m < host.gpus[g].mig.size())
    return add_mig(g, static_cast<int>(m));
  return false;
}

std::string what_host_has(const Node& host) {
  const std::size_t n = host.gpus.size();
  std::string has = n == 0 ? std::string("no GPU") : "GPUs 0 to " + std::to_string(n - 1);
  return "node " + host.name + " has " + has + " (NVML indices, full GPU- UUIDs or PCI bus ids as gpulab devices shows "
         "them, MIG devices as GPU:MIG or full MIG- UUIDs)";
}

}  // namespace

int ContainerView::container_index(int host_physical) const {
  const auto it = std::find(host_gpus.begin(), host_gpus.end(), host_physical);
  return it == host_gpus.end() ? -1 : static_cast<int>(it - host_gpus.begin());
}

ContainerView container_view(const Node& host, const std::optional<std::string>& value) {
  ContainerView view;
  view.value = value;
  if (!value) return view;
  const auto entries = toolkit_entries(*value);
  const bool is_void = entries.empty() || std::find(entries.begin(), entries.end(), "void") != entries.end();
  view.kind = is_void ? ContainerView::Kind::Void : ContainerView::Kind::Devices;
  for (const auto& entry : entries) {
    if (is_void) break;
    if (entry == "all") view.kind = ContainerView::Kind::All;
    if (entry == "none") view.kind = ContainerView::Kind::None;
    if (entry == "all" || entry == "none") break;
  }
  if (view.kind == ContainerView::Kind::Void || view.kind == ContainerView::Kind::None) return view;
  Selection selected{std::vector<bool>(host.gpus.size(), false), std::vector<std::vector<int>>(host.gpus.size())};
  for (const auto& entry : entries) {
    if (iequal(entry, "all")) {  // nvidia-container-cli's "all" (any case) ends the list
      view.kind = ContainerView::Kind::All;
      break;
    }
    if (!select_entry(host, entry, selected))
      throw ContainerError("NVIDIA_VISIBLE_DEVICES=" + *value + ": the container runtime would refuse to start it (" +
                           "nvidia-container-cli: device error: " + entry + ": unknown device): " + what_host_has(host));
  }
  for (std::size_t g = 0; g < host.gpus.size(); ++g) {
    const bool all = view.kind == ContainerView::Kind::All || selected.whole[g];
    if (!all && selected.mig[g].empty()) continue;
    std::vector<int> instances = selected.mig[g];
    if (all) {
      instances.clear();
      for (int m = 0; m < static_cast<int>(host.gpus[g].mig.size()); ++m) instances.push_back(m);
    }
    std::sort(instances.begin(), instances.end());
    view.host_gpus.push_back(static_cast<int>(g));
    view.mig_instances.push_back(std::move(instances));
  }
  return view;
}

Node container_node(const Node& host, const ContainerView& view) {
  if (!view.in_container()) return host;
  Node node = host;
  node.gpus.clear();
  node.cuda_order.clear();
  for (std::size_t i = 0; i < view.host_gpus.size(); ++i) {
    Gpu gpu = host.gpus.at(static_cast<std::size_t>(view.host_gpus[i]));
    gpu.mig.clear();
    for (const int m : view.mig_instances[i]) gpu.mig.push_back(host.gpus[static_cast<std::size_t>(view.host_gpus[i])].mig.at(static_cast<std::size_t>(m)));
    node.gpus.push_back(std::move(gpu));
  }
  for (const int physical : host.cuda_order)
    if (const int inside = view.container_index(physical); inside >= 0) node.cuda_order.push_back(inside);
  return node;
}

std::vector<VisibleDevice> visible_devices(const Node& host, const ContainerView& view,
                                           const std::optional<std::string>& cuda_visible_devices, DeviceOrder order) {
  if (!view.in_container()) return visible_devices(host, cuda_visible_devices, order);
  std::vector<VisibleDevice> devices;
  for (const VisibleDevice& inside : visible_devices(container_node(host, view), cuda_visible_devices, order)) {
    const auto i = static_cast<std::size_t>(inside.physical_index);
    const int mig = inside.mig_index < 0 ? -1 : view.mig_instances[i].at(static_cast<std::size_t>(inside.mig_index));
    devices.push_back({view.host_gpus[i], mig});
  }
  return devices;
}

std::optional<std::string> explain_visibility(const Node& host, const ContainerView& view,
                                              const std::optional<std::string>& cuda_visible_devices, DeviceOrder order) {
  if (view.kind == ContainerView::Kind::Void)
    return "NVIDIA_VISIBLE_DEVICES=" + view.value.value_or("") +
           ": not a GPU container: the runtime injects neither the driver nor a GPU, so CUDA finds no device";
  if (view.kind == ContainerView::Kind::None)
    return std::string("NVIDIA_VISIBLE_DEVICES=none: the runtime injects the driver but no GPU, so CUDA finds no device");
  if (!view.in_container()) return explain_visibility(host, cuda_visible_devices, order);
  return explain_visibility(container_node(host, view), cuda_visible_devices, order);
}

ContainerView current_container_view(const Node& host) {
  const char* value = std::getenv("NVIDIA_VISIBLE_DEVICES");
  return container_view(host, value == nullptr ? std::nullopt : std::optional<std::string>(value));
}

}  // namespace gpulab
