// Running a multi-process lesson the way a learner does — under `gpulab launch` — and reading
// what was observed: the launcher's summary (each process's GPUs, sampled from the node
// state from outside) and every rank's lesson report.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lesson_run.h"
#include "report/launch_summary.h"

namespace gpulab::test {

struct LaunchedWorker {
  int rank = 0;
  int local_rank = 0;
  int node_rank = 0;
  std::string host;       ///< the simulated host (node0, node1) when several run here
  int exit_code = -1;
  int signal = 0;
  bool stopped = false;   ///< stopped by the launcher after another rank failed
  std::map<int, std::uint64_t> peak;  ///< physical GPU -> peak bytes, as nvidia-smi saw it
  std::optional<LessonRun> report;    ///< absent when the rank was stopped before it reported
  /// Files it wrote in its own temporary folder (the launcher gives each rank one, TMPDIR),
  /// as the filesystem saw them: which process wrote a checkpoint, observed.
  std::vector<std::string> wrote;

  /// The physical GPUs nvidia-smi listed this process on at any time.
  std::set<int> listed_on() const;
};

struct LaunchedRun {
  ProcessResult process;   ///< the launcher's
  LaunchSummary summary;  ///< --summary-json
  std::vector<LaunchedWorker> workers;  ///< by rank
  std::optional<int> first_failure;     ///< the rank the launcher names as failing first

  const LaunchedWorker& rank(int r) const;
};

struct LaunchShape {
  int nproc_per_node = 1;
  int nnodes = 1;
};

/// `gpulab launch --nproc-per-node P --nnodes N -- <lesson program> args --json` under a
/// clean CUDA environment plus `env`, with a fresh node state and a time limit.
LaunchedRun run_launched(const std::string& id, const LaunchShape& shape, const Env& env = {},
                         const std::vector<std::string>& args = {}, Target target = check_target());

/// Every rank finished with no error: otherwise stops the test case, quoting the error of
/// the rank that failed first ("expected: every rank trains with no error — observed: rank 4
/// failed: CUDA error: invalid device ordinal (at 'uncaught')").
void require_all_ranks_ok(const LaunchedRun& run, const std::string& doing);

}  // namespace gpulab::test
