// The launch summary `gpulab launch --summary-json FILE` writes: how each worker ended and
// the physical GPUs it was seen on (docs/distributed.md, "The summary").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpulab/observe.h"

namespace gpulab {

struct WorkerGpu {
  int physical_index = -1;
  std::uint64_t peak_bytes = 0;
};

struct WorkerSummary {
  int rank = 0;
  int local_rank = 0;
  int node_rank = 0;
  std::string host;  ///< the simulated host ("" for this one)
  std::string node;  ///< its node's name
  int pid = 0;
  int exit_code = -1;
  int signal = 0;
  bool stopped = false;  ///< stopped by the launcher after another worker failed
  std::vector<WorkerGpu> gpus;
  /// Files it wrote in its own temporary folder (TMPDIR), as the filesystem saw them.
  std::vector<std::string> wrote;
};

struct LaunchSummary {
  std::optional<Backend> backend;  ///< none when no host was observed ("" in the document)
  int nnodes = 1;
  std::optional<int> node_rank;
  int nproc_per_node = 1;
  std::string master_addr;
  int master_port = 0;
  int exit_code = 0;
  std::optional<int> first_failure;  ///< the rank that failed first
  int interrupted_by = 0;            ///< the signal the launcher forwarded, 0 if none
  std::vector<WorkerSummary> workers;

  /// The worker of `rank`, or nullptr.
  const WorkerSummary* worker(int rank) const;
};

/// The summary as JSON text (what the launcher writes).
std::string launch_summary_json(const LaunchSummary& summary);
/// Parses it. Throws ReportError (report/report_reader.h) naming the offending field.
LaunchSummary parse_launch_summary(const std::string& json);

}  // namespace gpulab
