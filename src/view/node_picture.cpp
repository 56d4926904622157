// The picture of the node after a run (docs/node-picture.md). The mapping is derived from the
// environment the report recorded, with the same visibility rules CUDA applies
// (gpulab/visibility.h); what the process used and where its tensors were are the report's
// observed facts, never derived.
#include "view/node_picture.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "model/container.h"
#include "model/node.h"
#include "model/visibility.h"

namespace gpulab::view {
namespace {

constexpr std::uint64_t kMiB = 1024ull * 1024ull;
constexpr std::uint64_t kGiB = 1024ull * kMiB;

// ---------------------------------------------------------------------------------------
// Lines of coloured spans, cut to the width.

enum class Tone { Plain, Dim, Bold, Cuda, Gpu, Context, Memory, Warn };

const char* ansi(Tone tone) {
  switch (tone) {
    case Tone::Plain: return "";
    case Tone::Dim: return "\x1b[2m";
    case Tone::Bold: return "\x1b[1m";
    case Tone::Cuda: return "\x1b[36m";
    case Tone::Gpu: return "\x1b[1;32m";
    case Tone::Context: return "\x1b[33m";
    case Tone::Memory: return "\x1b[32m";
    case Tone::Warn: return "\x1b[1;31m";
  }
  return "";
}

// Columns of plain UTF-8 (no escapes): code points, every one a column wide here.
int columns(const std::string& text) {
  int n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

// The first `keep` columns of plain UTF-8 text.
std::string first_columns(const std::string& text, int keep) {
  std::size_t at = 0;
  for (int seen = 0; at < text.size(); ++at) {
    if ((static_cast<unsigned char>(text[at]) & 0xC0) != 0x80) {
      if (seen == keep) break;
      ++seen;
    }
  }
  return text.substr(0, at);
}

std::string pad(const std::string& text, int to) {
  const int have = columns(text);
  return have >= to ? text : text + std::string(static_cast<std::size_t>(to - have), ' ');
}

class Line {
 public:
  Line& add(std::string text, Tone tone = Tone::Plain) {
    spans_.emplace_back(std::move(text), tone);
    return *this;
  }
  Line& append(const Line& other) {
    spans_.insert(spans_.end(), other.spans_.begin(), other.spans_.end());
    return *this;
  }
  int width() const {
    int n = 0;
    for (const auto& span : spans_) n += columns(span.first);
    return n;
  }
  // Cut to `style.width` columns, the last one an ellipsis when something was cut.
  std::string render(const PictureStyle& style) const {
    const int limit = std::max(style.width, 1);
    const bool cut = width() > limit;
    int room = cut ? limit - 1 : limit;
    std::string out;
    for (const auto& [text, tone] : spans_) {
      if (room <= 0) break;
      const std::string part = columns(text) > room ? first_columns(text, room) : text;
      room -= columns(part);
      const bool colored = style.color && tone != Tone::Plain;
      if (colored) out += ansi(tone);
      out += part;
      if (colored) out += "\x1b[0m";
    }
    if (cut) out += "…";
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + '\n';
  }

 private:
  std::vector<std::pair<std::string, Tone>> spans_;
};

// Words of `text` over lines of at most `width` columns, each starting with `indent`.
std::vector<std::string> wrap(const std::string& text, int width, const std::string& indent) {
  std::vector<std::string> lines;
  std::string line = indent;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t space = text.find(' ', at);
    const std::string word = text.substr(at, space == std::string::npos ? std::string::npos : space - at);
    at = space == std::string::npos ? text.size() : space + 1;
    if (word.empty()) continue;
    if (line != indent && columns(line) + 1 + columns(word) > width) {
      lines.push_back(line);
      line = indent;
    }
    line += (line == indent ? "" : " ") + word;
  }
  if (line != indent) lines.push_back(line);
  return lines;
}

std::string join(const std::vector<std::string>& items, const char* separator = ", ") {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

// "0-1, 6-7" for {0, 1, 6, 7}.
std::string ranges(const std::vector<int>& sorted) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    parts.push_back(j == i ? std::to_string(sorted[i]) : fmt::format("{}-{}", sorted[i], sorted[j]));
    i = j + 1;
  }
  return join(parts);
}

// ---------------------------------------------------------------------------------------
// The facts of a report.

std::optional<Node> node_of(const Report& report) {
  std::vector<std::string> specs;
  if (report.env.gpulab_node) specs.push_back(*report.env.gpulab_node);
  if (!report.node.empty()) specs.push_back(report.node);
  for (const auto& spec : specs) {
    try {
      Node node = load_node_file(resolve_node_path(spec));
      if (node.name == report.node || report.backend != "sim") return node;
    } catch (const NodeError&) {
    }
  }
  return std::nullopt;
}

// "cuda:1" -> 1; nullopt for "cpu" or "cuda" without an index.
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

// Each named tensor where it was last seen, in the order first seen.
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

// CUDA_VISIBLE_DEVICES -> CUDA index -> physical GPU, under the variables the report recorded.
struct Mapping {
  std::optional<std::string> visible;  // CUDA_VISIBLE_DEVICES (nullopt: unset)
  std::optional<std::string> order_variable;
  DeviceOrder order = DeviceOrder::FastestFirst;
  std::optional<ReportEnvironment> start;  // the variables at start, when these are the ones at exit
  bool changed = false;
  std::vector<int> physical;    // per CUDA index; -1 when not known
  std::vector<int> mig;         // per CUDA index: MIG instance or -1
  struct Entry {
    std::string text;
    int cuda = -1;  // the CUDA index it became, -1 when CUDA dropped it
  };
  std::vector<Entry> entries;
  std::optional<std::string> note;
  bool derived = false;  // from the node file (else from the tensors only)
  ContainerView container;  // NVIDIA_VISIBLE_DEVICES: integer entries count in its GPUs
};

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

// `simulated`: the simulated node plays the container runtime (NVIDIA_VISIBLE_DEVICES); on real
// GPUs the runtime already did, and the process's numbers are the container's own.
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

// The mapping CUDA used: the variables at start, or those at exit when the program changed
// them (setenv before CUDA started) and only they explain what was observed.
Mapping mapping_of(const std::optional<Node>& node, const Report& report) {
  Mapping start = map_devices(node, report.env, report.backend == "sim");
  const bool changed = report.env_at_exit.cuda_visible_devices != report.env.cuda_visible_devices ||
                       report.env_at_exit.cuda_device_order != report.env.cuda_device_order;
  if (node && changed) {
    Mapping exit = map_devices(node, report.env_at_exit, report.backend == "sim");
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

std::string variable_text(const std::optional<std::string>& value) {
  return value ? "CUDA_VISIBLE_DEVICES=" + *value : "CUDA_VISIBLE_DEVICES unset";
}

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
  if (report.backend == "sim" && report.env.nvidia_visible_devices) {  // a simulated container's share
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

// The header: the variable's meaning on the left, the node on the right when both fit.
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

// The diagram: one row per list entry (or per CUDA device when the variable is unset), each
// CUDA device pointing at its physical GPU, with the tensors last seen there.
void diagram(std::string& out, const Mapping& m, const std::optional<Node>& node, const Report& report,
             const PictureStyle& style) {
  const TensorPlaces places = tensor_places(m, report);
  const DiagramColumns c = diagram_columns(m, node);
  device_rows(out, m, node, places, c, style);
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
  diagram_notes(out, m, node, style);
}

struct BarLayout {
  int cells = 24;
  std::uint64_t scale = kGiB;
};

BarLayout bar_layout(int width, int fixed, std::uint64_t largest) {
  return {std::clamp(width - fixed, 6, 30), bar_scale_bytes(largest)};
}

std::string scale_text(std::uint64_t scale) { return fmt::format("{} GiB", scale / kGiB); }

// The title of the memory rows, with the bar's scale and glyphs on the same line when it fits.
void legend(std::string& out, const std::string& title, const BarLayout& layout, const PictureStyle& style) {
  Line key;
  key.add(fmt::format("bar: 0 to {}, linear; ", scale_text(layout.scale)), Tone::Dim)
      .add("▓", Tone::Context)
      .add(" context ", Tone::Dim)
      .add("█", Tone::Memory)
      .add(" memory", Tone::Dim);
  Line line;
  line.add(title);
  if (style.width - line.width() - key.width() >= 2) {
    out += line.add("  ").append(key).render(style);
  } else {
    out += line.render(style) + Line().add("  ").append(key).render(style);
  }
}

std::uint64_t context_share(const std::optional<Node>& node, int physical, const GpuUsage& usage) {
  if (!usage.context) return 0;
  if (!node || physical < 0 || static_cast<std::size_t>(physical) >= node->gpus.size()) return usage.used_bytes;
  return std::min(usage.used_bytes, node->gpus[static_cast<std::size_t>(physical)].context_bytes);
}

// The memory rows: this process on each physical GPU at the last observation.
void memory(std::string& out, const Mapping& m, const std::optional<Node>& node, const Report& report, const PictureStyle& style) {
  if (report.observations.empty()) {
    out += Line().add("this process recorded no observation: no memory to show", Tone::Dim).render(style);
    return;
  }
  const Observation& last = report.observations.back();
  std::map<int, int> cuda_of;  // physical -> CUDA index (whole GPU or MIG)
  for (std::size_t i = 0; i < m.physical.size(); ++i)
    if (m.physical[i] >= 0 && !cuda_of.count(m.physical[i])) cuda_of[m.physical[i]] = static_cast<int>(i);
  const int gpus = node ? static_cast<int>(node->gpus.size()) : 0;
  std::set<int> rows;
  for (const auto& [physical, cuda] : cuda_of) rows.insert(physical);
  for (const GpuUsage& usage : last.gpus) rows.insert(usage.physical_index);
  std::vector<int> folded;  // neither visible nor used: one line together
  for (int p = 0; p < gpus; ++p)
    if (!rows.count(p)) folded.push_back(p);
  std::uint64_t largest = 0;
  for (const GpuUsage& usage : last.gpus) largest = std::max(largest, usage.used_bytes);
  const int label_width = static_cast<int>(fmt::format("GPU {}", rows.empty() ? 0 : *rows.rbegin()).size());
  const int cuda_width = std::max(6, static_cast<int>(fmt::format("cuda:{}", m.physical.size()).size()));
  // "  GPU 3  cuda:1  <bar>  438.0 MiB  ctx"
  const int fixed = 2 + label_width + 2 + cuda_width + 2 + 2 + 10 + 5;
  const BarLayout layout = bar_layout(style.width, fixed, largest);
  legend(out, fmt::format("this process on each physical GPU ({}):", last.label), layout, style);
  for (int physical : rows) {
    const GpuUsage* usage = last.gpu(physical);
    const auto cuda = cuda_of.find(physical);
    Line line;
    line.add("  ").add(pad(fmt::format("GPU {}", physical), label_width), Tone::Gpu).add("  ");
    if (cuda != cuda_of.end()) line.add(pad(fmt::format("cuda:{}", cuda->second), cuda_width), Tone::Cuda);
    else line.add(pad(usage != nullptr ? "hidden" : "-", cuda_width), Tone::Dim);
    line.add("  ");
    if (usage == nullptr && cuda == cuda_of.end()) {
      line.add("·  not visible, unused", Tone::Dim);
    } else {
      const std::uint64_t used = usage != nullptr ? usage->used_bytes : 0;
      const std::uint64_t context = usage != nullptr ? context_share(node, physical, *usage) : 0;
      line.add(memory_bar(used, context, layout.scale, layout.cells, style.color)).add("  ");
      line.add(fmt::format("{:>10}", memory_amount(used)), used > 0 ? Tone::Bold : Tone::Dim);
      if (usage != nullptr && usage->context) line.add("  ctx", Tone::Context);
      if (usage != nullptr && cuda == cuda_of.end()) line.add("  (not visible, yet used!)", Tone::Warn);
    }
    out += line.render(style);
  }
  if (!folded.empty())
    out += Line()
               .add(fmt::format("  GPU {}  ·  not visible, unused ({} GPUs)", ranges(folded), folded.size()), Tone::Dim)
               .render(style);
}

// ---------------------------------------------------------------------------------------
// The ranks' picture (render_ranks_picture): their common environment, a line per rank for
// its devices, then a memory row per (physical GPU, rank).

// The ranks' common environment, once; a rank that differs says so on its own line.
void ranks_header(std::string& out, const std::vector<RankReport>& ranks, std::size_t host_count, const PictureStyle& style) {
  const Report& first = ranks.front().report;
  const std::optional<Node> node = node_of(first);
  const Mapping shared = map_devices(node, first.env, first.backend == "sim");
  std::string node_text = node_summary(node, first);
  if (host_count > 1) node_text += fmt::format(" (each of {} hosts)", host_count);
  Line line;
  line.add(fmt::format("{} ranks, ", ranks.size())).add(variable_text(first.env.cuda_visible_devices), Tone::Bold);
  if (first.env.cuda_device_order) line.add("  CUDA_DEVICE_ORDER=" + *first.env.cuda_device_order, Tone::Bold);
  const int gap = style.width - line.width() - columns(node_text);
  if (gap >= 3) out += line.add(std::string(static_cast<std::size_t>(gap), ' ')).add(node_text, Tone::Dim).render(style);
  else out += line.render(style) + Line().add("  " + node_text, Tone::Dim).render(style);
  if (shared.note && style.explain)
    for (const auto& text : wrap("note: " + *shared.note, style.width, "  ")) out += Line().add(text, Tone::Warn).render(style);
}

// "rank 1", with its host when the ranks ran on several.
std::string rank_label(const RankReport& r, bool several_hosts) {
  return several_hosts ? fmt::format("rank {} {}", r.rank, r.host.empty() ? "(here)" : "@" + r.host)
                       : fmt::format("rank {}", r.rank);
}

// A rank's CUDA devices holding tensors, plus those it has only a context on (empty names).
std::map<int, std::vector<std::string>> tensors_by_cuda_device(const Report& report, const Mapping& m,
                                                               std::vector<std::string>& on_cpu) {
  std::map<int, std::vector<std::string>> on_cuda;
  for (const auto& t : last_locations(report)) {
    if (const auto index = cuda_index(t.device)) on_cuda[*index].push_back(t.name);
    else on_cpu.push_back(t.name);
  }
  std::set<int> used;
  if (!report.observations.empty())
    for (const auto& usage : report.observations.back().gpus) used.insert(usage.physical_index);
  for (std::size_t i = 0; i < m.physical.size(); ++i)
    if (used.count(m.physical[i]) && !on_cuda.count(static_cast<int>(i))) on_cuda[static_cast<int>(i)] = {};
  return on_cuda;
}

// One rank's line: its CUDA devices holding tensors (or a context), and the physical GPU behind each.
std::string rank_devices_line(const RankReport& r, const std::string& label, const Report& first, const PictureStyle& style) {
  const std::optional<Node> rank_node = node_of(r.report);
  const Mapping m = mapping_of(rank_node, r.report);
  std::vector<std::string> on_cpu;
  const auto on_cuda = tensors_by_cuda_device(r.report, m, on_cpu);
  Line line;
  line.add("  ").add(label, Tone::Bold).add("  ");
  if (r.report.env.cuda_visible_devices != first.env.cuda_visible_devices)
    line.add(variable_text(r.report.env.cuda_visible_devices) + "  ", Tone::Dim);
  bool any = false;
  for (const auto& [index, names] : on_cuda) {
    if (any) line.add("   ");
    any = true;
    const bool known = static_cast<std::size_t>(index) < m.physical.size() && m.physical[static_cast<std::size_t>(index)] >= 0;
    line.add(fmt::format("cuda:{}", index), Tone::Cuda).add(" ─► ");
    line.add(known ? gpu_name(m, static_cast<std::size_t>(index), rank_node) : "GPU ?", Tone::Gpu);
    line.add(names.empty() ? "  (context only)" : "  ◄ " + join(names));
  }
  if (!on_cpu.empty()) line.add(any ? "   " : "").add("cpu ◄ " + join(on_cpu));
  if (!any && on_cpu.empty()) line.add("no tensor, no GPU", Tone::Dim);
  return line.render(style);
}

// One memory row: a rank's usage of one physical GPU at its last observation.
struct RankMemoryRow {
  std::string host;
  int physical;
  const RankReport* rank;
  const GpuUsage* usage;
};

// Every rank's last observation, a row per GPU it used: GPUs in order, host by host.
std::vector<RankMemoryRow> rank_memory_rows(const std::vector<RankReport>& ranks) {
  std::vector<RankMemoryRow> rows;
  for (const auto& r : ranks)
    if (!r.report.observations.empty())
      for (const auto& usage : r.report.observations.back().gpus) rows.push_back({r.host, usage.physical_index, &r, &usage});
  std::stable_sort(rows.begin(), rows.end(), [](const RankMemoryRow& a, const RankMemoryRow& b) {
    return std::tie(a.host, a.physical) < std::tie(b.host, b.physical);
  });
  return rows;
}

// The label and rank columns' widths, and the bar's layout for what is left.
struct RankMemoryColumns {
  int label_width = 0;
  int rank_width = 0;
  BarLayout layout;
};

RankMemoryColumns rank_memory_columns(const std::vector<RankMemoryRow>& rows, int width) {
  RankMemoryColumns c;
  std::uint64_t largest = 0;
  for (const RankMemoryRow& row : rows) {
    c.label_width = std::max(c.label_width, columns(fmt::format("{} GPU {}", row.host, row.physical)));
    c.rank_width = std::max(c.rank_width, columns(fmt::format("rank {}", row.rank->rank)));
    largest = std::max(largest, row.usage->used_bytes);
  }
  const int fixed = 2 + c.label_width + 2 + c.rank_width + 2 + 2 + 10 + 5 + 8;
  c.layout = bar_layout(width, fixed, largest);
  return c;
}

std::string rank_memory_line(const RankMemoryRow& row, const RankMemoryColumns& c, bool several_hosts, bool shared,
                             const PictureStyle& style) {
  const std::optional<Node> rank_node = node_of(row.rank->report);
  Line line;
  const std::string label = several_hosts && !row.host.empty() ? fmt::format("{} GPU {}", row.host, row.physical)
                                                               : fmt::format("GPU {}", row.physical);
  line.add("  ").add(pad(label, c.label_width), Tone::Gpu).add("  ").add(pad(fmt::format("rank {}", row.rank->rank), c.rank_width)).add("  ");
  line.add(memory_bar(row.usage->used_bytes, context_share(rank_node, row.physical, *row.usage), c.layout.scale, c.layout.cells,
                      style.color))
      .add("  ")
      .add(fmt::format("{:>10}", memory_amount(row.usage->used_bytes)), Tone::Bold);
  if (row.usage->context) line.add("  ctx", Tone::Context);
  if (shared) line.add("  shared", Tone::Warn);
  return line.render(style);
}

// Memory: a row per (physical GPU, rank) that used it, GPUs in order, host by host.
void ranks_memory(std::string& out, const std::vector<RankReport>& ranks, bool several_hosts, const PictureStyle& style) {
  const std::vector<RankMemoryRow> rows = rank_memory_rows(ranks);
  const RankMemoryColumns c = rank_memory_columns(rows, style.width);
  legend(out, "each rank on each physical GPU (its last observation):", c.layout, style);
  if (rows.empty()) out += Line().add("  no rank used a GPU", Tone::Dim).render(style);
  std::map<std::pair<std::string, int>, int> sharing;  // ranks per GPU: two on one GPU is worth a mark
  for (const RankMemoryRow& row : rows) ++sharing[{row.host, row.physical}];
  for (const RankMemoryRow& row : rows) out += rank_memory_line(row, c, several_hosts, sharing[{row.host, row.physical}] > 1, style);
}

}  // namespace

int display_width(const std::string& text) {
  int n = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\x1b' && i + 1 < text.size() && text[i + 1] == '[') {
      i += 2;
      while (i < text.size() && !(text[i] >= '@' && text[i] <= '~')) ++i;
      continue;
    }
    n += (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80 ? 1 : 0;
  }
  return n;
}

PictureStyle stdout_style() {
  PictureStyle style;
  const char* no_color = std::getenv("NO_COLOR");
  style.color = isatty(STDOUT_FILENO) == 1 && (no_color == nullptr || *no_color == '\0');
  winsize size{};
  if (isatty(STDOUT_FILENO) == 1 && ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) {
    style.width = size.ws_col;
  } else if (const char* columns_variable = std::getenv("COLUMNS")) {
    const int value = std::atoi(columns_variable);
    if (value > 0) style.width = value;
  }
  style.width = std::clamp(style.width, 40, 160);
  return style;
}

std::uint64_t bar_scale_bytes(std::uint64_t largest_bytes) {
  std::uint64_t scale = kGiB;
  while (scale < largest_bytes && scale < (1ull << 62)) scale *= 2;
  return scale;
}

std::string memory_amount(std::uint64_t bytes) {
  if (bytes == 0) return "0 MiB";
  if (bytes >= 10 * kGiB) return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / static_cast<double>(kGiB));
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / static_cast<double>(kMiB));
}

std::string memory_bar(std::uint64_t used_bytes, std::uint64_t context_bytes, std::uint64_t scale_bytes, int cells, bool color) {
  cells = std::max(cells, 2);
  const auto share = [&](std::uint64_t bytes) {
    if (bytes == 0 || scale_bytes == 0) return 0;
    const double exact = static_cast<double>(bytes) * cells / static_cast<double>(scale_bytes);
    return std::clamp(static_cast<int>(exact + 0.5), 1, cells);
  };
  context_bytes = std::min(context_bytes, used_bytes);
  int context = share(context_bytes);
  int total = std::max(share(used_bytes), context);
  if (used_bytes > context_bytes && total == context) {  // memory beyond the context shows too
    if (total < cells) ++total;
    else --context;
  }
  auto repeat = [](const char* glyph, int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += glyph;
    return s;
  };
  const std::string ctx = repeat("▓", context), mem = repeat("█", total - context), free = repeat("░", cells - total);
  if (!color) return ctx + mem + free;
  return (ctx.empty() ? "" : ansi(Tone::Context) + ctx + "\x1b[0m") + (mem.empty() ? "" : ansi(Tone::Memory) + mem + "\x1b[0m") +
         ansi(Tone::Dim) + free + "\x1b[0m";
}

std::string render_node_picture(const Report& report, const PictureStyle& style) {
  const std::optional<Node> node = node_of(report);
  const Mapping m = mapping_of(node, report);
  std::string out;
  header(out, m, node_summary(node, report), style);
  diagram(out, m, node, report, style);
  memory(out, m, node, report, style);
  return out;
}

std::string render_ranks_picture(const std::vector<RankReport>& ranks, const PictureStyle& style) {
  if (ranks.empty()) return Line().add("no rank wrote a report: nothing to picture", Tone::Dim).render(style);
  std::set<std::string> hosts;
  for (const auto& r : ranks) hosts.insert(r.host);
  const bool several_hosts = hosts.size() > 1;
  std::string out;
  ranks_header(out, ranks, hosts.size(), style);
  int label_width = 0;
  for (const auto& r : ranks) label_width = std::max(label_width, columns(rank_label(r, several_hosts)));
  for (const auto& r : ranks)
    out += rank_devices_line(r, pad(rank_label(r, several_hosts), label_width), ranks.front().report, style);
  ranks_memory(out, ranks, several_hosts, style);
  return out;
}

RunPicture render_run_picture(const RunDocument& document, const PictureStyle& style) {
  RunPicture picture;
  if (document.kind == RunDocument::Kind::kRanks) {
    std::vector<RankReport> ranks;
    for (const auto& part : document.parts)
      if (part.report) ranks.push_back({part.rank, document.host_of(part.rank), *part.report});
      else picture.problems += "gpulab: no node picture: a rank's report is not valid (" + part.problem + ")\n";
    picture.out = "\n" + render_ranks_picture(ranks, style);
    return picture;
  }
  if (document.parts.empty() || !document.parts.front().report) {
    if (!document.parts.empty())
      picture.problems = "gpulab: no node picture: the report is not valid (" + document.parts.front().problem + ")\n";
    picture.out = "\n(no node picture: the program wrote no report)\n";
    return picture;
  }
  picture.out = "\n" + render_node_picture(*document.parts.front().report, style);
  return picture;
}

}  // namespace gpulab::view
