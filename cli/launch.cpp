// gpulab launch: torchrun for the tutorial. Starts one process per GPU with torchrun's
// environment, prefixes their output with the rank, stops them all when one fails, and
// ends with what each process was *observed* to use: the node state (or NVML), sampled
// while they ran, the way nvitop samples — not what the programs say about themselves.
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "exit_codes.h"
#include "gpulab/launcher.h"
#include "gpulab/observe.h"

namespace gpulab::cli {
namespace {

struct LaunchOptions {
  LaunchPlan plan;
  int node_rank = -1;
  std::string summary_json;
  bool quiet = false;
};

// Peak usage per worker and physical GPU, from every sample of every host's node state.
class UsageSampler {
 public:
  explicit UsageSampler(const std::vector<WorkerSpec>& workers) {
    std::set<std::string> hosts;
    for (const auto& w : workers) hosts.insert(w.host);
    const char* own = std::getenv("GPULAB_HOST");
    const std::string saved = own != nullptr ? own : "";
    for (const auto& host : hosts) {
      // The observer reads GPULAB_HOST when it opens the node state: one per simulated host.
      if (!host.empty()) setenv("GPULAB_HOST", host.c_str(), 1);
      try {
        observers_[host] = make_observer();
      } catch (const std::exception& e) {
        std::cerr << "gpulab launch: cannot observe the node" << (host.empty() ? "" : " of " + host) << ": " << e.what()
                  << " (the summary will show no GPUs)\n";
      }
      if (own != nullptr) setenv("GPULAB_HOST", saved.c_str(), 1);
      else unsetenv("GPULAB_HOST");
    }
  }

  void sample(const std::vector<int>& worker_pids) {
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

  /// Physical GPU -> peak bytes of the worker with this pid on `host`.
  std::map<int, std::uint64_t> used_by(const std::string& host, int pid) const {
    const auto found = peaks_.find({host, pid});
    return found == peaks_.end() ? std::map<int, std::uint64_t>{} : found->second;
  }
  std::string node_name(const std::string& host) const {
    const auto found = node_names_.find(host);
    return found == node_names_.end() ? "" : found->second;
  }
  std::string backend() const { return observers_.empty() ? "" : observers_.begin()->second->backend(); }

 private:
  std::map<std::string, std::unique_ptr<Observer>> observers_;
  std::map<std::pair<std::string, int>, std::map<int, std::uint64_t>> peaks_;
  std::map<std::string, std::string> node_names_;
};

std::string gpus_text(const std::map<int, std::uint64_t>& used) {
  if (used.empty()) return "none";
  std::string text;
  for (const auto& [gpu, bytes] : used)
    text += fmt::format("{}GPU {} ({} MiB)", text.empty() ? "" : ", ", gpu, bytes / (1024 * 1024));
  return text;
}

std::string ended(const WorkerOutcome& w) {
  if (w.signal != 0) return fmt::format("signal {}{}", w.signal, w.stopped ? " (stopped)" : "");
  return fmt::format("{}{}", w.exit_code, w.stopped && w.exit_code != 0 ? " (stopped)" : "");
}

void print_summary(const LaunchOptions& options, const LaunchResult& result, const UsageSampler& usage) {
  const auto& plan = options.plan;
  std::cerr << fmt::format("\ngpulab launch: {} worker{} on {} node{}, rendezvous at {}:{}{}\n", result.workers.size(),
                           result.workers.size() == 1 ? "" : "s", plan.node_rank ? 1 : plan.nnodes,
                           (plan.node_rank ? 1 : plan.nnodes) == 1 ? "" : "s", plan.master_addr, plan.master_port,
                           plan.node_rank ? fmt::format(" (this is node {} of {})", *plan.node_rank, plan.nnodes) : "");
  std::cerr << fmt::format("{:<5} {:<6} {:<16} {:>8}  {:<20} {}\n", "rank", "local", "node", "pid", "exit",
                           "physical GPUs used (peak memory, as nvidia-smi saw it)");
  for (const auto& w : result.workers) {
    const std::string node = w.spec.host.empty() ? usage.node_name("") : w.spec.host + ":" + usage.node_name(w.spec.host);
    std::cerr << fmt::format("{:<5} {:<6} {:<16} {:>8}  {:<20} {}\n", w.spec.rank, w.spec.local_rank, node, w.pid,
                             ended(w), gpus_text(usage.used_by(w.spec.host, w.pid)));
  }
  if (result.first_failure >= 0) {
    const auto& w = result.workers[static_cast<std::size_t>(result.first_failure)];
    const std::string how = w.stopped && w.signal != 0 ? "it recorded an error, then was stopped while exiting"
                            : w.signal != 0             ? fmt::format("signal {}", w.signal)
                                                        : fmt::format("exit code {}", w.exit_code);
    std::cerr << fmt::format("gpulab launch: rank {} (pid {}) failed first ({}); the others were stopped. Exit code {}.\n",
                             w.spec.rank, w.pid, how, result.exit_code);
  } else if (result.interrupted_by != 0) {
    std::cerr << fmt::format("gpulab launch: interrupted (signal {}), forwarded to every worker.\n", result.interrupted_by);
  }
}

void write_summary_json(const LaunchOptions& options, const LaunchResult& result, const UsageSampler& usage) {
  nlohmann::json workers = nlohmann::json::array();
  for (const auto& w : result.workers) {
    nlohmann::json gpus = nlohmann::json::array();
    for (const auto& [gpu, bytes] : usage.used_by(w.spec.host, w.pid)) gpus.push_back({{"physical_index", gpu}, {"peak_bytes", bytes}});
    workers.push_back({{"rank", w.spec.rank},
                       {"local_rank", w.spec.local_rank},
                       {"node_rank", w.spec.node_rank},
                       {"host", w.spec.host},
                       {"node", usage.node_name(w.spec.host)},
                       {"pid", w.pid},
                       {"exit_code", w.exit_code},
                       {"signal", w.signal},
                       {"stopped", w.stopped},
                       {"gpus", gpus}});
  }
  const nlohmann::json out = {
      {"backend", usage.backend()},
      {"nnodes", options.plan.nnodes},
      {"node_rank", options.plan.node_rank ? nlohmann::json(*options.plan.node_rank) : nlohmann::json(nullptr)},
      {"nproc_per_node", options.plan.nproc_per_node},
      {"master_addr", options.plan.master_addr},
      {"master_port", options.plan.master_port},
      {"exit_code", result.exit_code},
      {"first_failure", result.first_failure >= 0 ? nlohmann::json(result.workers[static_cast<std::size_t>(result.first_failure)].spec.rank)
                                                  : nlohmann::json(nullptr)},
      {"interrupted_by", result.interrupted_by},
      {"workers", workers}};
  std::ofstream file(options.summary_json);
  file << out.dump(2) << '\n';
  if (!file) std::cerr << "gpulab launch: could not write " << options.summary_json << '\n';
}

void run_launch(LaunchOptions& options) {
  LaunchPlan& plan = options.plan;
  if (options.node_rank >= 0) plan.node_rank = options.node_rank;
  std::vector<WorkerSpec> workers;
  try {
    validate(plan);
    if (plan.master_port == 0) plan.master_port = free_port();
    workers = plan_workers(plan, [](const char* name) { return std::getenv(name); });
  } catch (const std::exception& e) {
    std::cerr << "gpulab launch: " << e.what() << '\n';
    throw Exit{kUsage};
  }
  UsageSampler usage(workers);
  const LaunchResult result =
      run_workers(plan, workers, [&](const std::vector<int>& pids) { usage.sample(pids); }, STDOUT_FILENO, STDERR_FILENO);
  if (!options.quiet) print_summary(options, result, usage);
  if (!options.summary_json.empty()) write_summary_json(options, result, usage);
  if (result.exit_code != 0) throw Exit{result.exit_code};
}

}  // namespace

void setup_launch(CLI::App& app) {
  auto options = std::make_shared<LaunchOptions>();
  auto* cmd = app.add_subcommand("launch", "torchrun for the tutorial: one process per GPU, with RANK, LOCAL_RANK, "
                                           "WORLD_SIZE, MASTER_ADDR, MASTER_PORT ... (docs/distributed.md)");
  cmd->add_option("--nproc-per-node", options->plan.nproc_per_node, "processes per node (one per GPU)")->required();
  cmd->add_option("--nnodes", options->plan.nnodes, "nodes in the job; without --node-rank all run here, each "
                                                    "on its own simulated node (GPULAB_HOST=node0, node1, ...)")
      ->capture_default_str();
  cmd->add_option("--node-rank", options->node_rank, "this host is node R of --nnodes: start only its processes");
  cmd->add_option("--master-addr", options->plan.master_addr, "where rank 0 serves the rendezvous store")->capture_default_str();
  cmd->add_option("--master-port", options->plan.master_port, "its port (default: a free one)");
  cmd->add_option("--stop-timeout", options->plan.stop_timeout_s,
                  "seconds between SIGTERM and SIGKILL when stopping the workers")->capture_default_str();
  cmd->add_option("--summary-json", options->summary_json, "also write the summary (ranks, exit codes, GPUs used) as JSON");
  cmd->add_flag("--quiet", options->quiet, "no summary table at the end");
  cmd->add_option("command", options->plan.command, "the program and its arguments, after --")->required();
  cmd->callback([options] { run_launch(*options); });
}

}  // namespace gpulab::cli
