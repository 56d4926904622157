#include "view/launch_table.h"

#include <fmt/format.h>

namespace gpulab::view {
namespace {

std::string gpus_text(const WorkerSummary& w) {
  if (w.gpus.empty()) return "none";
  std::string text;
  for (const auto& gpu : w.gpus)
    text += fmt::format("{}GPU {} ({} MiB)", text.empty() ? "" : ", ", gpu.physical_index, gpu.peak_bytes / (1024 * 1024));
  return text;
}

std::string ended(const WorkerSummary& w) {
  if (w.signal != 0) return fmt::format("signal {}{}", w.signal, w.stopped ? " (stopped)" : "");
  return fmt::format("{}{}", w.exit_code, w.stopped && w.exit_code != 0 ? " (stopped)" : "");
}

std::string outcome_line(const LaunchSummary& summary) {
  if (summary.first_failure) {
    const WorkerSummary* w = summary.worker(*summary.first_failure);
    if (w == nullptr) return "";
    const std::string how = w->stopped && w->signal != 0 ? "it recorded an error, then was stopped while exiting"
                            : w->signal != 0             ? fmt::format("signal {}", w->signal)
                                                         : fmt::format("exit code {}", w->exit_code);
    return fmt::format("gpulab launch: rank {} (pid {}) failed first ({}); the others were stopped. Exit code {}.\n", w->rank,
                       w->pid, how, summary.exit_code);
  }
  if (summary.interrupted_by != 0)
    return fmt::format("gpulab launch: interrupted (signal {}), forwarded to every worker.\n", summary.interrupted_by);
  return "";
}

}  // namespace

std::string render_launch_table(const LaunchSummary& summary) {
  const int nodes = summary.node_rank ? 1 : summary.nnodes;
  std::string out = fmt::format(
      "\ngpulab launch: {} worker{} on {} node{}, rendezvous at {}:{}{}\n", summary.workers.size(),
      summary.workers.size() == 1 ? "" : "s", nodes, nodes == 1 ? "" : "s", summary.master_addr, summary.master_port,
      summary.node_rank ? fmt::format(" (this is node {} of {})", *summary.node_rank, summary.nnodes) : "");
  out += fmt::format("{:<5} {:<6} {:<16} {:>8}  {:<20} {}\n", "rank", "local", "node", "pid", "exit",
                     "physical GPUs used (peak memory, as nvidia-smi saw it)");
  for (const auto& w : summary.workers) {
    const std::string node = w.host.empty() ? w.node : w.host + ":" + w.node;
    out += fmt::format("{:<5} {:<6} {:<16} {:>8}  {:<20} {}\n", w.rank, w.local_rank, node, w.pid, ended(w), gpus_text(w));
  }
  return out + outcome_line(summary);
}

}  // namespace gpulab::view
