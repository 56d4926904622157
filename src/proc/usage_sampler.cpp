#include "proc/usage_sampler.h"

#include "proc/written_files.h"

#include <algorithm>
#include <cstdlib>
#include <set>

namespace gpulab {

UsageSampler::UsageSampler(const std::vector<WorkerSpec>& workers, const std::function<std::unique_ptr<Observer>()>& make) {
  std::set<std::string> hosts;
  for (const auto& w : workers) hosts.insert(w.host);
  const char* own = std::getenv("GPULAB_HOST");
  const std::string saved = own != nullptr ? own : "";
  for (const auto& host : hosts) {
    // The observer reads GPULAB_HOST when it opens the node state: one per simulated host.
    if (!host.empty()) setenv("GPULAB_HOST", host.c_str(), 1);
    try {
      observers_[host] = make();
    } catch (const std::exception& e) {
      warnings_ += "gpulab launch: cannot observe the node" + (host.empty() ? std::string() : " of " + host) + ": " +
                   e.what() + " (the summary will show no GPUs)\n";
    }
    if (own != nullptr) setenv("GPULAB_HOST", saved.c_str(), 1);
    else unsetenv("GPULAB_HOST");
  }
}

void UsageSampler::sample(const std::vector<int>& worker_pids) {
  const std::set<int> workers(worker_pids.begin(), worker_pids.end());
  for (auto& [host, observer] : observers_) {
    std::vector<GpuView> gpus;
    try {
      gpus = observer->gpus();
    } catch (const std::exception&) {
      continue;  // a state file being rebuilt: the next sample reads it
    }
    if (node_names_.count(host) == 0) node_names_[host] = observer->node();
    for (const GpuView& gpu : gpus)
      for (const ProcessOnGpu& process : gpu.processes) {
        // A worker's GPU process may be a child of it (sh -c ...): match by process group.
        const int group = workers.count(process.pid) ? process.pid : process_group_of(process.pid);
        if (workers.count(group) == 0) continue;
        std::uint64_t& peak = peaks_[{host, group}][gpu.physical_index];
        peak = std::max(peak, process.used_bytes);
      }
  }
}

std::map<int, std::uint64_t> UsageSampler::used_by(const std::string& host, int pid) const {
  const auto found = peaks_.find({host, pid});
  return found == peaks_.end() ? std::map<int, std::uint64_t>{} : found->second;
}

std::string UsageSampler::node_name(const std::string& host) const {
  const auto found = node_names_.find(host);
  return found == node_names_.end() ? "" : found->second;
}

std::optional<Backend> UsageSampler::backend() const {
  if (observers_.empty()) return std::nullopt;
  return observers_.begin()->second->backend();
}

LaunchSummary summarize(const LaunchPlan& plan, const LaunchResult& result, const UsageSampler& usage) {
  LaunchSummary summary;
  summary.backend = usage.backend();
  summary.nnodes = plan.nnodes;
  summary.node_rank = plan.node_rank;
  summary.nproc_per_node = plan.nproc_per_node;
  summary.master_addr = plan.master_addr;
  summary.master_port = plan.master_port;
  summary.exit_code = result.exit_code;
  if (result.first_failure >= 0) summary.first_failure = result.workers[static_cast<std::size_t>(result.first_failure)].spec.rank;
  summary.interrupted_by = result.interrupted_by;
  for (const auto& w : result.workers) {
    WorkerSummary worker{w.spec.rank, w.spec.local_rank, w.spec.node_rank, w.spec.host, usage.node_name(w.spec.host),
                         w.pid, w.exit_code, w.signal, w.stopped, {}, {}};
    for (const auto& [gpu, bytes] : usage.used_by(w.spec.host, w.pid)) worker.gpus.push_back({gpu, bytes});
    summary.workers.push_back(std::move(worker));
  }
  return summary;
}

LaunchSummary launch_observed(const LaunchPlan& plan, std::vector<WorkerSpec>& workers,
                              const std::function<std::unique_ptr<Observer>()>& make, int out_fd, int err_fd,
                              std::ostream& warnings) {
  UsageSampler usage(workers, make);
  warnings << usage.warnings();
  WrittenFiles written(workers);  // a TMPDIR each: which rank wrote which file
  const LaunchResult result = run_workers(plan, workers, [&](const std::vector<int>& pids) { usage.sample(pids); }, out_fd, err_fd);
  LaunchSummary summary = summarize(plan, result, usage);
  const auto files = written.by_rank();
  for (auto& worker : summary.workers)
    if (const auto found = files.find(worker.rank); found != files.end()) worker.wrote = found->second;
  return summary;
}

}  // namespace gpulab
