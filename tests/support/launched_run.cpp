#include "launched_run.h"

#include <filesystem>
#include <fstream>
#include <iterator>

#include "expect.h"

namespace gpulab::test {

std::set<int> LaunchedWorker::listed_on() const {
  std::set<int> gpus;
  for (const auto& entry : peak) gpus.insert(entry.first);
  return gpus;
}

const LaunchedWorker& LaunchedRun::rank(int r) const {
  for (const auto& worker : workers)
    if (worker.rank == r) return worker;
  FAIL("the launcher's summary has no rank " << r);
  throw std::logic_error("unreachable");
}

LaunchedRun run_launched(const std::string& id, const LaunchShape& shape, const Env& env,
                         const std::vector<std::string>& args, Target target) {
  const std::string reports = fresh_state_dir();  // a private, empty folder of its own
  ProcessOptions options;
  options.argv = {bin_dir() + "/gpulab", "launch", "--nproc-per-node", std::to_string(shape.nproc_per_node),
                  "--nnodes", std::to_string(shape.nnodes), "--quiet", "--summary-json", reports + "/launch.json",
                  "--", program(id, target)};
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  options.argv.emplace_back("--json");
  options.env = {{"CUDA_VISIBLE_DEVICES", std::nullopt}, {"CUDA_DEVICE_ORDER", std::nullopt},
                 {"GPULAB_NODE", std::nullopt},          {"GPULAB_HOST", std::nullopt},
                 {"NVIDIA_VISIBLE_DEVICES", std::nullopt},
                 {"OMP_NUM_THREADS", std::nullopt},      {"GPULAB_STATE_DIR", fresh_state_dir()},
                 {"GPULAB_REPORT_DIR", reports},         {"GPULAB_DIST_TIMEOUT", "60"}};
  options.env.insert(options.env.end(), env.begin(), env.end());
  options.timeout_s = 180;
  LaunchedRun run;
  run.process = run_lesson_process(options);
  INFO("gpulab launch " << run.process.outcome(options.timeout_s) << "\nstderr:\n" << run.process.err);
  REQUIRE_FALSE(run.process.timed_out);
  REQUIRE(run.process.signal == 0);
  std::ifstream summary_file(reports + "/launch.json");
  REQUIRE(summary_file);
  const std::string summary_text((std::istreambuf_iterator<char>(summary_file)), std::istreambuf_iterator<char>());
  REQUIRE_NOTHROW(run.summary = parse_launch_summary(summary_text));
  run.first_failure = run.summary.first_failure;
  for (const auto& w : run.summary.workers) {
    LaunchedWorker worker;
    worker.rank = w.rank;
    worker.local_rank = w.local_rank;
    worker.node_rank = w.node_rank;
    worker.host = w.host;
    worker.exit_code = w.exit_code;
    worker.signal = w.signal;
    worker.stopped = w.stopped;
    for (const auto& gpu : w.gpus) worker.peak[gpu.physical_index] = gpu.peak_bytes;
    worker.wrote = w.wrote;
    std::ifstream report(reports + "/rank" + std::to_string(worker.rank) + ".json");
    if (report) worker.report = LessonRun{ProcessResult{}, nlohmann::json::parse(report)};
    run.workers.push_back(std::move(worker));
  }
  return run;
}

void require_all_ranks_ok(const LaunchedRun& run, const std::string& doing) {
  if (run.process.ok()) return;
  std::string observed = "gpulab launch " + run.process.outcome(0);
  if (run.first_failure) {
    const LaunchedWorker& root = run.rank(*run.first_failure);
    observed = "rank " + std::to_string(root.rank) + " failed";
    if (root.report)
      for (const auto& error : root.report->report.at("errors"))
        observed += ": " + error.at("message").get<std::string>().substr(0, error.at("message").get<std::string>().find('\n')) +
                    " (at '" + error.at("label").get<std::string>() + "')";
  }
  require_that(false, doing + ", every rank with no error", observed);
}

}  // namespace gpulab::test
