#include "launched_run.h"

#include <filesystem>
#include <fstream>

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
                 {"OMP_NUM_THREADS", std::nullopt},      {"GPULAB_STATE_DIR", fresh_state_dir()},
                 {"GPULAB_REPORT_DIR", reports},         {"GPULAB_DIST_TIMEOUT", "60"}};
  options.env.insert(options.env.end(), env.begin(), env.end());
  options.timeout_s = 180;
  LaunchedRun run;
  run.process = run_lesson_process(options);
  INFO("gpulab launch " << run.process.outcome(options.timeout_s) << "\nstderr:\n" << run.process.err);
  REQUIRE_FALSE(run.process.timed_out);
  REQUIRE(run.process.signal == 0);
  std::ifstream summary(reports + "/launch.json");
  REQUIRE(summary);
  run.summary = nlohmann::json::parse(summary);
  if (!run.summary.at("first_failure").is_null()) run.first_failure = run.summary.at("first_failure").get<int>();
  for (const auto& w : run.summary.at("workers")) {
    LaunchedWorker worker;
    worker.rank = w.at("rank").get<int>();
    worker.local_rank = w.at("local_rank").get<int>();
    worker.node_rank = w.at("node_rank").get<int>();
    worker.host = w.at("host").get<std::string>();
    worker.exit_code = w.at("exit_code").get<int>();
    worker.signal = w.at("signal").get<int>();
    worker.stopped = w.at("stopped").get<bool>();
    for (const auto& gpu : w.at("gpus"))
      worker.peak[gpu.at("physical_index").get<int>()] = gpu.at("peak_bytes").get<std::uint64_t>();
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
