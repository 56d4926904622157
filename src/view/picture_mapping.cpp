// The facts a picture draws: the report's node and the mapping CUDA used (picture_mapping.h).
#include "view/picture_mapping.h"

#include <algorithm>

namespace gpulab::view::picture {
namespace {

std::vector<std::string> split_entries(const std::string& list) {
  std::vector<std::string> entries;
  std::size_t at = 0;
  while (true) {
    const std::size_t comma = list.find(',', at);
    entries.push_back(list.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return entries;
}

// Whether what the report observed could have happened under `m`: every tensor on cuda:N is
// on the GPU the mapping puts there, every GPU holding a context is visible.
bool consistent(const Mapping& m, const Report& report) {
  for (const Observation& observation : report.observations) {
    for (const TensorLocation& tensor : observation.tensors) {
      const auto index = cuda_index(tensor.device);
      if (!index || !tensor.physical_index) continue;
      if (*index >= static_cast<int>(m.physical.size()) || m.physical[static_cast<std::size_t>(*index)] != *tensor.physical_index)
        return false;
    }
    for (const GpuUsage& usage : observation.gpus)
      if (usage.context && std::find(m.physical.begin(), m.physical.end(), usage.physical_index) == m.physical.end())
        return false;
  }
  return true;
}

}  // namespace

std::optional<Node> node_of(const Report& report) {
  std::vector<std::string> specs;
  if (report.env.gpulab_node) specs.push_back(*report.env.gpulab_node);
  if (!report.node.empty()) specs.push_back(report.node);
  for (const auto& spec : specs) {
    try {
      Node node = load_node_file(resolve_node_path(spec));
      if (node.name == report.node || report.backend != Backend::kSim) return node;
    } catch (const NodeError&) {
    }
  }
  return std::nullopt;
}

ReportFacts facts_of(const Report& report) {
  std::optional<Node> node = node_of(report);
  Mapping mapping = mapping_of(node, report);
  return {report, std::move(node), std::move(mapping)};
}

std::optional<int> cuda_index(const std::string& device) {
  if (device.rfind("cuda:", 0) != 0) return std::nullopt;
  try {
    std::size_t used = 0;
    const int index = std::stoi(device.substr(5), &used);
    if (used == device.size() - 5 && index >= 0) return index;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

std::vector<TensorLocation> last_locations(const Report& report) {
  std::vector<TensorLocation> tensors;
  for (const Observation& observation : report.observations)
    for (const TensorLocation& tensor : observation.tensors) {
      const auto same = std::find_if(tensors.begin(), tensors.end(), [&](const auto& t) { return t.name == tensor.name; });
      if (same == tensors.end()) tensors.push_back(tensor);
      else *same = tensor;
    }
  return tensors;
}

Mapping map_devices(const std::optional<Node>& node, const ReportEnvironment& env, bool simulated) {
  Mapping m;
  m.visible = env.cuda_visible_devices;
  m.order_variable = env.cuda_device_order;
  m.order = parse_device_order(env.cuda_device_order ? env.cuda_device_order->c_str() : nullptr);
  if (!node) return m;
  // Inside a container CUDA counts in the container's GPUs (model/container.h).
  try {
    if (simulated) m.container = container_view(*node, env.nvidia_visible_devices);
  } catch (const ContainerError&) {
    return m;  // the runtime would not have started it: the tensors alone tell
  }
  m.derived = true;
  const auto devices = visible_devices(*node, m.container, m.visible, m.order);
  for (const auto& d : devices) {
    m.physical.push_back(d.physical_index);
    m.mig.push_back(d.mig_index);
  }
  m.note = explain_visibility(*node, m.container, m.visible, m.order);
  if (!m.visible || m.visible->empty()) return m;
  // Which entry became which CUDA index: entry i is honoured when the list up to it shows
  // one device more than the list before it, and the whole list keeps that device there.
  const auto texts = split_entries(*m.visible);
  std::string prefix;
  std::size_t before = 0;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    prefix += (i == 0 ? "" : ",") + texts[i];
    const auto upto = visible_devices(*node, m.container, prefix, m.order);
    Mapping::Entry entry{texts[i], -1};
    if (upto.size() == before + 1 && before < devices.size() && upto.back().physical_index == devices[before].physical_index &&
        upto.back().mig_index == devices[before].mig_index)
      entry.cuda = static_cast<int>(before);
    before = upto.size();
    m.entries.push_back(std::move(entry));
  }
  return m;
}

Mapping mapping_of(const std::optional<Node>& node, const Report& report) {
  Mapping start = map_devices(node, report.env, report.backend == Backend::kSim);
  const bool changed = report.env_at_exit.cuda_visible_devices != report.env.cuda_visible_devices ||
                       report.env_at_exit.cuda_device_order != report.env.cuda_device_order;
  if (node && changed) {
    Mapping exit = map_devices(node, report.env_at_exit, report.backend == Backend::kSim);
    if (consistent(exit, report) && !consistent(start, report)) {
      exit.changed = true;
      exit.start = report.env;
      return exit;
    }
    start.changed = true;
  }
  if (!node) {
    // No node file (real GPUs): what the tensors show, index by index.
    for (const TensorLocation& tensor : last_locations(report)) {
      const auto index = cuda_index(tensor.device);
      if (!index || !tensor.physical_index || *index > kMaxGpus) continue;
      if (start.physical.size() <= static_cast<std::size_t>(*index)) {
        start.physical.resize(static_cast<std::size_t>(*index) + 1, -1);
        start.mig.resize(static_cast<std::size_t>(*index) + 1, -1);
      }
      start.physical[static_cast<std::size_t>(*index)] = *tensor.physical_index;
    }
  }
  return start;
}

}  // namespace gpulab::view::picture
