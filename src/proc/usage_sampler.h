// What each worker of a launch was *observed* to use: every host's node state (or NVML)
// sampled while the workers ran, the way nvitop samples, not what the programs say.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <ostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gpulab/observe.h"
#include "proc/launcher.h"
#include "report/launch_summary.h"

namespace gpulab {

/// Peak usage per worker and physical GPU, from every sample of every host's node state.
class UsageSampler {
 public:
  /// One observer per simulated host of `workers` (made with GPULAB_HOST set to it).
  UsageSampler(const std::vector<WorkerSpec>& workers, const std::function<std::unique_ptr<Observer>()>& make);
  /// One sample; `worker_pids` are the workers' process groups.
  void sample(const std::vector<int>& worker_pids);
  /// Physical GPU -> peak bytes of the worker with this pid on `host`.
  std::map<int, std::uint64_t> used_by(const std::string& host, int pid) const;
  std::string node_name(const std::string& host) const;
  /// The observers' backend (none without a host to observe).
  std::optional<Backend> backend() const;
  /// Why a host could not be observed ("" when every one could).
  const std::string& warnings() const { return warnings_; }

 private:
  std::string warnings_;
  std::map<std::string, std::unique_ptr<Observer>> observers_;
  std::map<std::pair<std::string, int>, std::map<int, std::uint64_t>> peaks_;
  std::map<std::string, std::string> node_names_;
};

/// The launch as its summary: the plan, how each worker ended and what it was seen using.
LaunchSummary summarize(const LaunchPlan& plan, const LaunchResult& result, const UsageSampler& usage);

/// `gpulab launch` once its workers are planned: each started (output to `out_fd` and
/// `err_fd`), sampled with `make`'s observers (why a host could not be: to `warnings`), in
/// a TMPDIR of its own (written_files.h); the summary, with the files each rank wrote.
LaunchSummary launch_observed(const LaunchPlan& plan, std::vector<WorkerSpec>& workers,
                              const std::function<std::unique_ptr<Observer>()>& make, int out_fd, int err_fd,
                              std::ostream& warnings);

}  // namespace gpulab
