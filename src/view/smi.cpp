// `gpulab smi`'s table and JSON, and the frames of `gpulab smi --watch` (view/smi.h).
#include "view/smi.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace gpulab::view {
namespace {

constexpr std::uint64_t kSmiMiB = 1024ull * 1024ull;  // nvidia-smi counts MiB

std::string mib(std::uint64_t bytes) { return fmt::format("{}MiB", bytes / kSmiMiB); }

std::string bar(std::uint64_t used, std::uint64_t total) {
  constexpr int kWidth = 20;
  // Clamped to the bar: a count past it would make the second string's length negative.
  const int filled = total == 0 || used >= total ? (used == 0 ? 0 : kWidth)
                                                 : static_cast<int>((used * kWidth + total - 1) / total);
  return "[" + std::string(static_cast<std::size_t>(filled), '#') + std::string(static_cast<std::size_t>(kWidth - filled), '.') + "]";
}

nlohmann::json gpu_json(const GpuView& gpu) {
  nlohmann::json processes = nlohmann::json::array();
  for (const auto& p : gpu.processes) {
    nlohmann::json row = {{"pid", p.pid}, {"name", p.name}, {"used_bytes", p.used_bytes}};
    if (p.gpu_instance >= 0) {  // NVML's gpuInstanceId / computeInstanceId on a MIG GPU
      row["gpu_instance"] = p.gpu_instance;
      row["compute_instance"] = p.compute_instance;
    }
    processes.push_back(std::move(row));
  }
  return {{"physical_index", gpu.physical_index}, {"uuid", gpu.uuid},
          {"name", gpu.name},                     {"pci_bus_id", gpu.pci_bus_id},
          {"total_bytes", gpu.total_bytes},       {"used_bytes", gpu.used_bytes},
          {"processes", processes}};
}

// ---------------------------------------------------------------------------------------
// The watch frame.

std::string color(const PictureStyle& style, const char* code, const std::string& text) {
  return style.color ? std::string(code) + text + "\x1b[0m" : text;
}

// Cut to the width (escape codes do not count).
std::string fit(const std::string& line, const PictureStyle& style) {
  if (display_width(line) <= style.width) return line;
  std::string out;
  int seen = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\x1b') {  // keep escapes whole, they take no column
      const std::size_t end = line.find('m', i);
      out += line.substr(i, end == std::string::npos ? std::string::npos : end - i + 1);
      if (end == std::string::npos) break;
      i = end;
      continue;
    }
    const bool starts = (static_cast<unsigned char>(line[i]) & 0xC0) != 0x80;
    if (starts && ++seen > style.width - 1) break;
    out += line[i];
  }
  return out + (style.color ? "\x1b[0m" : "") + "…";
}

// A frame's text, each line cut to the width.
struct Frame {
  const PictureStyle& style;
  std::string text;
  void line(const std::string& row) { text += fit(row, style) + "\n"; }
};

// The bars of process memory: their scale and their cells.
struct ProcessBars {
  std::uint64_t scale = 0;
  int cells = 0;
};

// A row per GPU; with `fold`, the idle ones on one line.
void gpu_lines(Frame& frame, const HostView& host, bool fold) {
  constexpr int kGpuCells = 20;
  std::vector<std::string> idle;
  for (const HostGpu& gpu : host.gpus) {
    if (fold && gpu.used_bytes == 0) {
      idle.push_back(std::to_string(gpu.physical_index));
      continue;
    }
    frame.line(fmt::format("  {:<4} {:<24} {:>20}  {}", gpu.physical_index, gpu.name.substr(0, 24),
                           fmt::format("{} / {} MiB", gpu.used_bytes / kSmiMiB, gpu.total_bytes / kSmiMiB),
                           memory_bar(gpu.used_bytes, 0, gpu.total_bytes, kGpuCells, frame.style.color)));
  }
  if (idle.empty()) return;
  std::string list;
  for (const auto& index : idle) list += (list.empty() ? "" : ",") + index;
  frame.line(fmt::format("  {:<4} idle: 0 / {} MiB each", list, host.gpus.front().total_bytes / kSmiMiB));
}

// A process's rows: one per GPU it uses or has a context on (its pid, rank and command on the first).
void process_lines(Frame& frame, const ProcessRow& p, const HostView& host, const ProcessBars& bars) {
  const PictureStyle& style = frame.style;
  bool first = true;
  for (std::size_t g = 0; g < p.used_bytes.size(); ++g) {
    const bool context = ((p.context_mask >> g) & 1u) != 0;
    if (p.used_bytes[g] == 0 && !context) continue;
    // The context's share of the bar: the node file's context size, when it has one.
    std::uint64_t context_bytes = 0;
    if (context) context_bytes = g < host.context_bytes.size() ? host.context_bytes[g] : p.used_bytes[g];
    frame.line(fmt::format("  {:>7}  {:<4}  {:<16} {:>3}  {:>10}  {}{}", first ? std::to_string(p.pid) : "",
                           first ? p.rank : "", first ? p.command : "", g, memory_amount(p.used_bytes[g]),
                           memory_bar(p.used_bytes[g], context_bytes, bars.scale, bars.cells, style.color),
                           context ? color(style, "\x1b[33m", "  ctx") : ""));
    first = false;
  }
  if (first) frame.line(fmt::format("  {:>7}  {:<4}  {:<16} {:>3}  {:>10}", p.pid, p.rank, p.command, "-", "0 MiB"));
}

// One host: its name (when there are several or it is named), its GPUs, then its processes.
void host_lines(Frame& frame, const HostView& host, std::size_t host_count, const ProcessBars& bars) {
  const PictureStyle& style = frame.style;
  if (host_count > 1 || !host.host.empty())
    frame.line(color(style, "\x1b[1m", host.host.empty() ? "host: this one (no GPULAB_HOST)" : "host: " + host.host + " (GPULAB_HOST)"));
  if (!host.error.empty()) {
    frame.line(color(style, "\x1b[1;31m", "  cannot read its node state: " + host.error));
    return;
  }
  frame.line(fmt::format("  {:<4} {:<24} {:>20}  {}", "GPU", "Name", "Memory-Usage", "of its total"));
  // Several hosts or a big node: the idle GPUs on one line, the rest one each.
  gpu_lines(frame, host, host_count > 1 || host.gpus.size() > 8);
  frame.line(fmt::format("  processes (bar: 0 to {} GiB, linear; {} context {} memory):", bars.scale / (1024ull * kSmiMiB),
                         color(style, "\x1b[33m", "▓"), color(style, "\x1b[32m", "█")));
  frame.line(fmt::format("  {:>7}  {:<4}  {:<16} {:>3}  {:>10}", "PID", "RANK", "COMMAND", "GPU", "MEMORY"));
  if (host.processes.empty()) frame.line("  no process holds GPU memory");
  for (const ProcessRow& p : host.processes) process_lines(frame, p, host, bars);
}

}  // namespace

std::vector<GpuView> container_smi_view(const ContainerView& view, const std::vector<GpuView>& host_gpus) {
  if (!view.in_container()) return host_gpus;
  std::vector<GpuView> inside;
  for (std::size_t i = 0; i < view.host_gpus.size(); ++i) {
    GpuView gpu = host_gpus.at(static_cast<std::size_t>(view.host_gpus[i]));
    gpu.physical_index = static_cast<int>(i);
    gpu.processes.clear();
    inside.push_back(std::move(gpu));
  }
  return inside;
}

std::string render_smi_table(const SmiSource& source, const std::vector<GpuView>& gpus) {
  std::string out = fmt::format("gpulab smi — node {} ({} backend), profile: {}\n", source.node, backend_name(source.backend),
                                source.profile.name());
  if (source.container) {
    out += fmt::format("inside a container: NVIDIA_VISIBLE_DEVICES={} (the host's view: gpulab smi --host)\n", *source.container);
    if (gpus.empty()) return out + "No devices were found\n";
  }
  out += fmt::format("{:<4} {:<26} {:<18} {:>22}  {}\n", "GPU", "Name", "Bus-Id", "Memory-Usage", "");
  for (const GpuView& gpu : gpus)
    out += fmt::format("{:<4} {:<26} {:<18} {:>22}  {}\n", gpu.physical_index, gpu.name, gpu.pci_bus_id,
                       fmt::format("{} / {}", mib(gpu.used_bytes), mib(gpu.total_bytes)), bar(gpu.used_bytes, gpu.total_bytes));
  out += fmt::format("\nProcesses:\n{:<4} {:>8}  {:<24} {:>12}\n", "GPU", "PID", "Process name", "GPU Memory");
  bool any = false;
  for (const GpuView& gpu : gpus)
    for (const auto& p : gpu.processes) {
      out += fmt::format("{:<4} {:>8}  {:<24} {:>12}\n", gpu.physical_index, p.pid, p.name, mib(p.used_bytes));
      any = true;
    }
  std::uint64_t used = 0;
  for (const GpuView& gpu : gpus) used += gpu.used_bytes;
  if (!any && source.container && used > 0)
    out += "  (none listed: the driver reports host PIDs, which this container's PID namespace does not have)\n";
  else if (!any) out += "  No running processes found\n";
  return out;
}

std::string render_smi_json(const SmiSource& source, const std::vector<GpuView>& gpus) {
  nlohmann::json out = {{"backend", backend_name(source.backend)},
                        {"node", source.node},
                        {"profile", profile_to_json(source.profile)},
                        {"gpus", nlohmann::json::array()}};
  if (source.container) out["nvidia_visible_devices"] = *source.container;
  for (const GpuView& gpu : gpus) out["gpus"].push_back(gpu_json(gpu));
  return out.dump(2) + "\n";
}

std::string render_smi_watch_frame(const WatchTitle& title, const std::vector<HostView>& hosts, const PictureStyle& style) {
  Frame frame{style, {}};
  frame.line(fmt::format("gpulab smi --watch · node {} ({}) · {} · every {:g} s{}", title.node, backend_name(title.backend), title.clock,
                         title.interval_s, title.interactive ? " · q quits" : ""));
  std::uint64_t largest = 0;
  for (const auto& host : hosts)
    for (const auto& p : host.processes)
      for (const auto bytes : p.used_bytes) largest = std::max(largest, bytes);
  // "  PID      RANK  COMMAND          GPU  MEMORY      <bar>  ctx"
  const ProcessBars bars{bar_scale_bytes(largest), std::clamp(style.width - 58, 6, 30)};
  for (const auto& host : hosts) host_lines(frame, host, hosts.size(), bars);
  return frame.text;
}

void enter_container(const ContainerView& container, SmiSource& source, std::vector<GpuView>& gpus) {
  if (!container.has_driver())
    throw std::runtime_error("NVIDIA_VISIBLE_DEVICES=" + container.value.value_or("") +
                             ": not a GPU container: the runtime injects no driver, so there is no nvidia-smi in it "
                             "(gpulab smi --host shows the host)");
  if (!container.in_container()) return;
  source.container = container.value.value_or("");
  gpus = container_smi_view(container, gpus);
}

}  // namespace gpulab::view
