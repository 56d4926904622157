// The node picture's header and diagram (picture_diagram.h).
#include "view/picture_diagram.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "view/picture_text.h"

namespace gpulab::view::picture {
namespace {

// What the variable means, in one phrase ("cut short" only when explaining: see PictureStyle).
Line visibility_line(const Mapping& m, bool explain) {
  Line line;
  const bool container = m.container.in_container();  // the container line is the node's
  if (!m.visible) {
    line.add("CUDA_VISIBLE_DEVICES", Tone::Bold)
        .add(container ? " unset: every container GPU, in " : " unset: every GPU, in ")
        .add(to_string(m.order))
        .add(" order");
  } else if (m.visible->empty()) {
    line.add("CUDA_VISIBLE_DEVICES=", Tone::Bold).add(" (empty): ").add("no GPU visible", Tone::Warn);
  } else {
    line.add("CUDA_VISIBLE_DEVICES=" + *m.visible, Tone::Bold);
    if (m.derived && static_cast<std::size_t>(std::count_if(m.entries.begin(), m.entries.end(), [](const auto& e) {
          return e.cuda >= 0;
        })) < m.entries.size() && explain)
      line.add(m.physical.empty() ? "  (no GPU visible)" : "  (cut short)", Tone::Warn);
  }
  return line;
}

// Where the report last saw each tensor: on a CUDA device of the mapping, on the CPU, or
// elsewhere (a CUDA index the mapping does not have).
struct TensorPlaces {
  std::map<int, std::vector<std::string>> on_cuda;  // CUDA index -> names
  std::vector<std::string> on_cpu;
  std::vector<std::string> elsewhere;
};

TensorPlaces tensor_places(const Mapping& m, const Report& report) {
  TensorPlaces places;
  for (const auto& t : last_locations(report)) {
    const auto index = cuda_index(t.device);
    if (index && static_cast<std::size_t>(*index) < m.physical.size()) places.on_cuda[*index].push_back(t.name);
    else if (index || t.physical_index) places.elsewhere.push_back(fmt::format("{} ({}{})", t.name, t.device,
                                                                              t.physical_index ? fmt::format(" = GPU {}", *t.physical_index) : ""));
    else places.on_cpu.push_back(t.name + (t.device == "cpu" ? "" : " (" + t.device + ")"));
  }
  return places;
}

// The diagram's layout: which columns it shows and how wide each is.
struct DiagramColumns {
  bool with_entries = false;  // the list entries' column is shown
  int entry_width = 0;
  int cuda_width = 0;
  int gpu_width = 5;
};

DiagramColumns diagram_columns(const Mapping& m, const std::optional<Node>& node) {
  DiagramColumns c;
  // The entries column, when it tells something the GPU numbers do not: an entry dropped, a
  // UUID, or an integer that names another GPU (CUDA's order is not the PCI order).
  for (const auto& e : m.entries)
    c.with_entries = c.with_entries || e.cuda < 0 ||
                     fmt::format("GPU {}", e.text) != gpu_name(m, static_cast<std::size_t>(e.cuda), node);
  for (const auto& e : m.entries) c.entry_width = std::max(c.entry_width, std::min(columns(e.text), 16));
  c.cuda_width = static_cast<int>(fmt::format("cuda:{}", m.physical.empty() ? 0 : m.physical.size() - 1).size());
  for (std::size_t i = 0; i < m.physical.size(); ++i) c.gpu_width = std::max(c.gpu_width, columns(gpu_name(m, i, node)));
  return c;
}

// A row per list entry (with the entries column) or per CUDA device.
void device_rows(std::string& out, const Mapping& m, const std::optional<Node>& node, const TensorPlaces& places,
                 const DiagramColumns& c, const PictureStyle& style) {
  auto device_row = [&](Line& line, std::size_t cuda) {
    line.add(pad(fmt::format("cuda:{}", cuda), c.cuda_width), Tone::Cuda).add(" ─► ").add(pad(gpu_name(m, cuda, node), c.gpu_width), Tone::Gpu);
    const auto names = places.on_cuda.find(static_cast<int>(cuda));
    if (names != places.on_cuda.end()) line.add("  ◄ ").add(join(names->second), Tone::Bold);
  };
  auto entry_cell = [&](const std::string& text) {
    const std::string shown = columns(text) > 16 ? first_columns(text, 15) + "…" : text;
    return pad(shown, c.entry_width) + "  ";
  };
  if (c.with_entries) {
    for (const auto& e : m.entries) {
      Line line;
      line.add("  ").add(entry_cell(e.text), Tone::Dim);
      if (e.cuda >= 0) device_row(line, static_cast<std::size_t>(e.cuda));
      else line.add(style.explain ? "✗ not visible: CUDA dropped this entry" : "✗ no CUDA device", Tone::Warn);
      out += line.render(style);
    }
  } else {
    for (std::size_t i = 0; i < m.physical.size(); ++i) {
      Line line;
      line.add("  ");
      device_row(line, i);
      out += line.render(style);
    }
  }
}

// The mapping's note, and the enumeration order integer entries count in when it is not the PCI order.
void diagram_notes(std::string& out, const Mapping& m, const std::optional<Node>& node, const PictureStyle& style) {
  if (m.note && style.explain)
    for (const auto& text : wrap("note: " + *m.note, style.width, "  ")) out += Line().add(text, Tone::Warn).render(style);
  if (!node || !m.visible || m.visible->empty()) return;
  const auto order = enumeration_order(container_node(*node, m.container), m.order);
  bool identity = true;
  for (std::size_t i = 0; i < order.size(); ++i) identity = identity && order[i] == static_cast<int>(i);
  if (identity) return;
  std::vector<std::string> gpus;
  for (int p : order) gpus.push_back(std::to_string(p));
  for (const auto& text : wrap(fmt::format("integer entries count in {} order: 0, 1, 2... are GPU {}", to_string(m.order),
                                           join(gpus)),
                               style.width, "  "))
    out += Line().add(text, Tone::Dim).render(style);
}

}  // namespace

std::string variable_text(const std::optional<std::string>& value) {
  return value ? "CUDA_VISIBLE_DEVICES=" + *value : "CUDA_VISIBLE_DEVICES unset";
}

std::string node_summary(const std::optional<Node>& node, const Report& report) {
  if (!node) return report.node.empty() ? std::string() : "node " + report.node;
  std::vector<std::pair<std::string, int>> kinds;
  for (const Gpu& gpu : node->gpus) {
    if (!kinds.empty() && kinds.back().first == gpu.name) ++kinds.back().second;
    else kinds.emplace_back(gpu.name, 1);
  }
  std::vector<std::string> parts;
  for (const auto& [name, count] : kinds) parts.push_back(fmt::format("{} x {}", count, name));
  std::string text = fmt::format("node {}: {}", node->name, join(parts, " + "));
  if (report.backend == Backend::kSim && report.env.nvidia_visible_devices) {  // a simulated container's share
    try {
      const ContainerView view = container_view(*node, report.env.nvidia_visible_devices);
      std::vector<std::string> gpus;
      for (const int g : view.host_gpus) gpus.push_back(std::to_string(g));
      text += gpus.empty() ? std::string("; a container of no GPU") : "; container: GPUs " + join(gpus, ",");
    } catch (const ContainerError&) {
    }
  }
  return text;
}

std::string gpu_name(const Mapping& m, std::size_t cuda, const std::optional<Node>& node) {
  const int physical = m.physical[cuda];
  if (physical < 0) return "GPU ?";
  std::string text = fmt::format("GPU {}", physical);
  if (m.mig[cuda] >= 0 && node && static_cast<std::size_t>(physical) < node->gpus.size()) {
    const auto& gpu = node->gpus[static_cast<std::size_t>(physical)];
    if (static_cast<std::size_t>(m.mig[cuda]) < gpu.mig.size())
      text += fmt::format(" MIG {}/{}", gpu.mig[static_cast<std::size_t>(m.mig[cuda])].gpu_instance,
                          gpu.mig[static_cast<std::size_t>(m.mig[cuda])].compute_instance);
  }
  return text;
}

void header(std::string& out, const Mapping& m, const std::string& node_text, const PictureStyle& style) {
  Line left = visibility_line(m, style.explain);
  std::optional<Line> order;  // CUDA_DEVICE_ORDER, on the same line when it fits
  if (m.order_variable) {
    Line text;
    text.add("CUDA_DEVICE_ORDER=" + *m.order_variable, Tone::Bold);
    if (left.width() + 2 + text.width() <= style.width) left.add("  ").append(text);
    else order = Line().add("  ").append(text);
  }
  const int gap = style.width - left.width() - columns(node_text);
  if (!node_text.empty() && gap >= 3) {
    left.add(std::string(static_cast<std::size_t>(gap), ' ')).add(node_text, Tone::Dim);
    out += left.render(style);
  } else {
    out += left.render(style);
    if (order) out += order->render(style);
    if (!node_text.empty()) out += Line().add("  " + node_text, Tone::Dim).render(style);
    order.reset();
  }
  if (order) out += order->render(style);
  if (m.changed && m.start) {
    std::vector<std::string> before;
    if (m.start->cuda_visible_devices != m.visible)
      before.push_back("CUDA_VISIBLE_DEVICES" + (m.start->cuda_visible_devices ? "=" + *m.start->cuda_visible_devices : " unset"));
    if (m.start->cuda_device_order != m.order_variable)
      before.push_back("CUDA_DEVICE_ORDER" + (m.start->cuda_device_order ? "=" + *m.start->cuda_device_order : " unset"));
    for (const auto& text : wrap(fmt::format("(the program set {} with setenv before CUDA started; at start: {})",
                                             before.size() > 1 ? "them" : "it", join(before)),
                                 style.width, "  "))
      out += Line().add(text, Tone::Dim).render(style);
  }
}

void diagram(std::string& out, const ReportFacts& facts, const PictureStyle& style) {
  const Mapping& m = facts.mapping;
  const TensorPlaces places = tensor_places(m, facts.report);
  const DiagramColumns c = diagram_columns(m, facts.node);
  device_rows(out, m, facts.node, places, c, style);
  if (m.physical.empty())
    out += Line().add("  no CUDA device: torch::cuda::is_available() is false", Tone::Warn).render(style);
  if (!places.on_cpu.empty()) {
    Line line;
    line.add("  ");
    if (c.with_entries) line.add(std::string(static_cast<std::size_t>(c.entry_width + 2), ' '));
    line.add(pad("cpu", c.cuda_width + 4 + c.gpu_width)).add("  ◄ ").add(join(places.on_cpu), Tone::Bold);
    out += line.render(style);
  }
  if (!places.elsewhere.empty()) out += Line().add("  elsewhere: ", Tone::Warn).add(join(places.elsewhere)).render(style);
  diagram_notes(out, m, facts.node, style);
}

}  // namespace gpulab::view::picture
