// The engine of `gpulab launch`: torchrun's job on one host — start one worker process per
// GPU with the torchrun environment, relay their output line by line with a rank prefix,
// forward SIGINT/SIGTERM, and stop every worker when one fails. Torch-free.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpulab {

/// What `gpulab launch` was asked to run: torchrun's options and the worker command.
struct LaunchPlan {
  int nnodes = 1;  ///< nodes in the job (`--nnodes`)
  /// Set: this host is node `node_rank` of `nnodes` (a real multi-node job: only its workers
  /// run here). Unset: every node runs here, each on its own simulated node (GPULAB_HOST).
  std::optional<int> node_rank;
  int nproc_per_node = 1;  ///< workers per node, one per GPU (`--nproc-per-node`)
  std::string master_addr = "127.0.0.1";  ///< rank 0's address (`MASTER_ADDR`)
  int master_port = 0;  ///< 0: pick a free one
  std::vector<std::string> command;  ///< the worker program and its arguments
  double stop_timeout_s = 3;  ///< SIGTERM, then SIGKILL after this long
};

/// Variables to set (a value) or remove (nullopt) in a worker's environment.
using EnvChanges = std::vector<std::pair<std::string, std::optional<std::string>>>;

/// One worker process: its ranks and the environment torchrun would give it.
struct WorkerSpec {
  int rank = 0;        ///< `RANK`: its place in the whole job
  int local_rank = 0;  ///< `LOCAL_RANK`: its place on its node, the GPU it should use
  int node_rank = 0;   ///< `GROUP_RANK`: which node it runs on
  std::string host;  ///< GPULAB_HOST given to it (simulated multi-node), empty: this host
  EnvChanges env;  ///< torchrun's variables for it
};

/// Checks the plan; throws std::invalid_argument with a message for the user.
void validate(const LaunchPlan& plan);

/// The workers this host starts, with torchrun's environment (RANK, LOCAL_RANK, GROUP_RANK,
/// WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, ...; OMP_NUM_THREADS=1 when more
/// than one per node unless `inherited` has it). `plan.master_port` must be set.
/// `inherited` looks a variable up in the launcher's environment (nullptr: unset).
std::vector<WorkerSpec> plan_workers(const LaunchPlan& plan, const std::function<const char*(const char*)>& inherited);

/// A free TCP port on the loopback interface (what torchrun does when none is given).
int free_port();

/// How one worker ended.
struct WorkerOutcome {
  WorkerSpec spec;  ///< the worker
  int pid = 0;      ///< its process id
  int exit_code = -1;  ///< -1 unless it exited
  int signal = 0;      ///< the signal that ended it
  bool stopped = false;  ///< ended by the launcher (another worker failed, or an interrupt)

  /// It did not exit with code 0 (a signal counts as a failure).
  bool failed() const { return exit_code != 0; }
  /// What a shell would see: the exit code, or 128 + the signal.
  int status() const { return exit_code >= 0 ? exit_code : 128 + signal; }
};

/// How a launch ended: every worker's outcome and the launcher's exit code.
struct LaunchResult {
  std::vector<WorkerOutcome> workers;  ///< in the order they were started
  int first_failure = -1;  ///< index into workers of the first to fail on its own, -1: none
  int interrupted_by = 0;  ///< SIGINT/SIGTERM received by the launcher, 0: none
  /// The launcher's exit code: 0, the first failing worker's status, or 128 + the signal.
  int exit_code = 0;
};

/// Called about every 10 ms while workers run, with the process-group ids of the live ones
/// (each worker leads its own process group, so a wrapper's children count as it).
using Sampler = std::function<void(const std::vector<int>& worker_pids)>;

/// Starts `workers` (each: plan.command with its env), relays each output line as
/// "[rankN]: line" (stdout to `out_fd`, stderr to `err_fd`), and returns when all ended.
/// Throws std::runtime_error if a worker cannot be started.
LaunchResult run_workers(const LaunchPlan& plan, const std::vector<WorkerSpec>& workers, const Sampler& sample,
                         int out_fd, int err_fd);

/// The process group of `pid` (/proc/PID/stat), -1 if it is gone.
int process_group_of(int pid);

}  // namespace gpulab
