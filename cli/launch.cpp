// gpulab launch: torchrun for the tutorial. Starts one process per GPU with torchrun's
// environment, prefixes their output with the rank, stops them all when one fails, and
// ends with what each process was *observed* to use (src/proc/usage_sampler.h).
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>

#include "commands.h"
#include "gpulab/observe.h"
#include "proc/launcher.h"
#include "proc/usage_sampler.h"
#include "report/launch_summary.h"
#include "report/outcome.h"
#include "view/launch_table.h"

namespace gpulab::cli {
namespace {

struct LaunchOptions {
  LaunchPlan plan;
  int node_rank = -1;
  std::string summary_json;
  bool quiet = false;
};

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
    throw Ended{Outcome::kUsage};
  }
  const LaunchSummary summary =
      launch_observed(plan, workers, [] { return make_observer(); }, STDOUT_FILENO, STDERR_FILENO, std::cerr);
  if (!options.quiet) std::cerr << view::render_launch_table(summary);
  if (!options.summary_json.empty()) {
    std::ofstream file(options.summary_json);
    file << launch_summary_json(summary);
    if (!file) std::cerr << "gpulab launch: could not write " << options.summary_json << '\n';
  }
  if (summary.exit_code != 0) throw EndedLike{summary.exit_code};
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
