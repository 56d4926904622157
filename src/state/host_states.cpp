// Listing a host's states (state/host_states.h). /proc is read here, not through proc/:
// state may use model/ and state/ only.
#include "state/host_states.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <utility>

namespace gpulab {
namespace {

std::string read_small_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return {};
  std::string text;
  text.resize(64 * 1024);
  file.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(file.gcount()));
  return text;
}

// Printable ASCII only: the name came from another process.
std::string printable(std::string text, std::size_t most) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();
  if (text.size() > most) text.resize(most);
  for (char& c : text)
    if (c < 0x20 || c > 0x7e) c = '?';
  return text;
}

// RANK's value in a NUL-separated environment block ("-" when it has none).
std::string rank_in(const std::string& environ) {
  std::string rank = "-";
  std::size_t at = 0;
  while (at < environ.size()) {
    const std::size_t end = std::min(environ.find('\0', at), environ.size());
    const std::string_view entry(environ.data() + at, end - at);
    if (entry.rfind("RANK=", 0) == 0) rank = printable(std::string(entry.substr(5)), 8);
    at = end + 1;
  }
  return rank.empty() ? "-" : rank;
}

}  // namespace

ProcessRow describe_process(int pid, const std::string& state_name) {
  ProcessRow row;
  row.pid = pid;
  const std::string proc = "/proc/" + std::to_string(pid);
  row.command = printable(read_small_file(proc + "/comm"), 32);
  if (row.command.empty()) row.command = printable(state_name, 32);
  // The environment is readable for our own processes only (same user): else "?".
  const std::string environ = read_small_file(proc + "/environ");
  row.rank = environ.empty() ? "?" : rank_in(environ);
  return row;
}

HostView observed_host(const std::vector<GpuView>& gpus) {
  std::vector<HostGpu> hosts;
  std::vector<ObservedUsage> usages;
  for (const GpuView& gpu : gpus) {
    hosts.push_back({gpu.physical_index, gpu.name, gpu.total_bytes, gpu.used_bytes});
    for (const auto& p : gpu.processes) usages.push_back({p.pid, p.name, gpu.physical_index, p.used_bytes});
  }
  return observed_host(std::move(hosts), usages);
}

HostView observed_host(std::vector<HostGpu> gpus, const std::vector<ObservedUsage>& usages) {
  HostView view;
  view.gpus = std::move(gpus);
  std::map<int, ProcessRow> rows;
  for (const ObservedUsage& usage : usages) {
    auto& row = rows[usage.pid];
    if (row.used_bytes.empty()) {
      row = describe_process(usage.pid, usage.name);
      row.used_bytes.assign(view.gpus.size(), 0);
      row.contexts_known = false;
    }
    row.used_bytes[static_cast<std::size_t>(usage.physical_index)] += usage.used_bytes;
  }
  for (auto& [pid, row] : rows) view.processes.push_back(std::move(row));
  return view;
}

std::map<std::string, std::string> host_state_files(const Node& node, bool all_hosts) {
  std::map<std::string, std::string> files;
  const std::string own = NodeState::default_path(node);
  const char* own_host = std::getenv("GPULAB_HOST");
  files[own_host != nullptr ? own_host : ""] = own;
  if (!all_hosts) return files;
  const std::string plain = node.name + ".state";
  const std::string prefix = node.name + "@";
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(NodeState::default_directory(), error)) {
    const std::string name = entry.path().filename().string();
    if (name == plain) files[""] = entry.path().string();
    else if (name.size() > prefix.size() + 6 && name.rfind(prefix, 0) == 0 && name.substr(name.size() - 6) == ".state")
      files[name.substr(prefix.size(), name.size() - prefix.size() - 6)] = entry.path().string();
  }
  return files;
}

std::vector<HostView> HostStates::read() {
  std::vector<HostView> views;
  for (const auto& [host, path] : host_state_files(node_, all_hosts_)) views.push_back(read_host(host, path));
  return views;
}

HostView HostStates::read_host(const std::string& host, const std::string& path) {
  HostView view;
  view.host = host;
  for (std::size_t p = 0; p < node_.gpus.size(); ++p) {
    view.gpus.push_back({static_cast<int>(p), node_.gpus[p].name, node_.gpus[p].total_bytes, 0});
    view.context_bytes.push_back(node_.gpus[p].context_bytes);
  }
  try {
    auto& state = states_[path];
    if (state == nullptr) state = std::make_unique<NodeState>(node_, path);
    for (const ProcessUsage& usage : state->processes()) {
      ProcessRow row = describe_process(usage.pid, usage.name);
      row.used_bytes = usage.used_bytes;
      row.context_mask = usage.context_mask;
      for (std::size_t p = 0; p < view.gpus.size() && p < row.used_bytes.size(); ++p) view.gpus[p].used_bytes += row.used_bytes[p];
      view.processes.push_back(std::move(row));
    }
  } catch (const std::exception& e) {
    view.error = e.what();
  }
  return view;
}

WatchedHosts::WatchedHosts(std::unique_ptr<Observer> observer, bool all_hosts) : observer_(std::move(observer)) {
  if (observer_->backend() == Backend::kSim) states_.emplace(load_selected_node(), all_hosts);
}

std::vector<HostView> WatchedHosts::read() {
  if (states_) return states_->read();
  return {observed_host(observer_->gpus())};
}

}  // namespace gpulab
