#include "grading/runner.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "model/node.h"
#include "model/container.h"
#include "model/visibility.h"
#include "proc/confine.h"
#include "proc/self.h"
#include "proc/temp_dir.h"
#include "proc/text_file.h"

namespace fs = std::filesystem;

namespace gpulab::grading {
namespace {

std::string joined_args(const std::vector<std::string>& args) {
  std::string text;
  for (const auto& arg : args) text += " " + arg;
  return text;
}

// The reports a run left in its GPULAB_REPORT_DIR: rank<N>.json of a launched lesson (with
// the launcher's launch.json), or the one process's <pid>.json.
RunDocument read_report_folder(const std::string& folder, bool launched) {
  RunDocument document;
  if (launched) {
    document.kind = RunDocument::Kind::kRanks;
    for (int rank = 0;; ++rank) {
      const std::string path = folder + "/rank" + std::to_string(rank) + ".json";
      if (!fs::exists(path)) break;
      RunDocument one = parse_run_document(read_text_file(path));
      if (!one.parts.empty()) one.parts.front().rank = rank;
      document.parts.push_back(std::move(one.parts.front()));
    }
    const std::string summary = read_text_file(folder + "/launch.json");
    if (!summary.empty()) {
      try {
        document.launch = parse_launch_summary(summary);
      } catch (const ReportError&) {
        // no hosts to name: the pictures go without them
      }
    }
    return document;
  }
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(folder, error)) {
    if (entry.path().extension() != ".json") continue;
    RunDocument one;
    try {
      one = parse_run_document(read_text_file(entry.path().string()));
    } catch (const ReportError&) {
      continue;
    }
    if (!one.parts.empty() && one.parts.front().report) return one;
    document = std::move(one);  // not a valid report: kept, with its problem, if nothing better comes
  }
  return document;
}

// The launcher's command line for a launched lesson, up to and including "--".
std::vector<std::string> launch_command(const LessonEntry& lesson, const Programs& programs) {
  std::vector<std::string> launch = {programs.bin + "/gpulab", "launch", "--nproc-per-node",
                                     std::to_string(lesson.nproc_per_node)};
  if (lesson.nnodes > 1) launch.insert(launch.end(), {"--nnodes", std::to_string(lesson.nnodes)});
  return launch;
}

// What a program printed with --json: its report, or a part that says why it is none.
RunDocument document_of_output(const std::string& out) {
  try {
    return parse_run_document(out);
  } catch (const ReportError& e) {
    RunDocument document;
    document.parts.push_back({out, std::nullopt, e.what(), -1});
    return document;
  }
}

struct StepRun {
  ProcessResult result;
  RunDocument document;
};

// One run of the lesson's program (or of its ranks under the launcher).
StepRun run_step(const LessonEntry& lesson, const RunRequest& request, const Programs& programs, ProcessOptions process,
                 const ProcessRun& run_program) {
  const std::string name = std::string(request.solution ? "solution" : "lesson") + "-" + lesson.id;
  const std::string program = programs.lesson_dir() + "/" + name;
  std::vector<std::string> args = process.argv;
  if (request.json) args.push_back("--json");
  process.capture = request.json;
  TempDir reports("gpulab-run", confined_area());  // the program writes here, in a box too
  process.env.emplace_back("GPULAB_REPORT_DIR", reports.path());
  process.argv = {program};
  if (lesson.launched()) {
    process.argv = launch_command(lesson, programs);
    if (!request.json && request.on_launch) {
      std::string shown = "gpulab launch";
      for (std::size_t i = 2; i < process.argv.size(); ++i) shown += " " + process.argv[i];
      request.on_launch(shown + " -- build/bin/" + name + joined_args(args));
    }
    if (request.json) process.argv.push_back("--quiet");
    process.argv.insert(process.argv.end(), {"--summary-json", reports.path() + "/launch.json", "--", program});
  }
  process.argv.insert(process.argv.end(), args.begin(), args.end());
  StepRun run;
  process.argv = confined(process.argv);  // in a grading box, out of the grader's reach
  run.result = run_program(process);
  program_end_of_confined(run.result);
  if (request.json && !lesson.launched()) {
    run.document = document_of_output(run.result.out);
  } else if (request.json || (request.after_step && run.result.signal == 0 && !run.result.timed_out)) {
    run.document = read_report_folder(reports.path(), lesson.launched());
  }
  return run;
}

}  // namespace

Programs this_build(const Manifest& manifest) {
  const std::string bin = executable_dir();
  return {bin, {bin + "/", manifest.root + "/"}, ""};
}

Scenario scenario_of(const std::vector<std::pair<std::string, std::string>>& variables, bool learner_wins) {
  Scenario scenario;
  for (const auto& [name, value] : variables) {
    const char* yours = learner_wins ? std::getenv(name.c_str()) : nullptr;
    if (yours == nullptr) scenario.env.emplace_back(name, value);
    scenario.banner += fmt::format(" {}={}{}", name, yours != nullptr ? yours : value, yours != nullptr ? " (yours)" : "");
  }
  return scenario;
}

std::optional<std::string> visibility_note(const Env& env) {
  auto effective = [&](const char* name) -> std::optional<std::string> {
    for (const auto& [key, value] : env)
      if (key == name) return value;
    const char* value = std::getenv(name);
    return value != nullptr ? std::optional<std::string>(value) : std::nullopt;
  };
  try {
    const auto node_spec = effective("GPULAB_NODE");
    const Node node = load_node_file(resolve_node_path(node_spec.value_or(kDefaultNodeName)));
    const auto order = effective("CUDA_DEVICE_ORDER");
    const ContainerView container = container_view(node, effective("NVIDIA_VISIBLE_DEVICES"));
    return explain_visibility(node, container, effective("CUDA_VISIBLE_DEVICES"),
                              parse_device_order(order ? order->c_str() : nullptr));
  } catch (const NodeError&) {
    return std::nullopt;  // the lesson itself reports a broken node
  } catch (const ContainerError&) {
    return std::nullopt;  // the lesson itself reports it: its CUDA does not start
  }
}

RunResult run_lesson_program(const LessonEntry& lesson, const RunRequest& request, const Programs& programs, const ProcessRun& run_program) {
  ProcessOptions base;
  base.timeout_s = request.timeout_s;
  base.env = request.extra_env;
  if (!request.learner_env)
    for (const char* name : {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "GPULAB_NODE", "NVIDIA_VISIBLE_DEVICES"})
      base.env.emplace_back(name, std::nullopt);
  for (auto& variable : scenario_of(lesson.env, request.learner_env).env) base.env.push_back(std::move(variable));
  // One run, or each step in order (arguments the learner gives make it one run).
  std::vector<LessonEntry::Step> steps = request.args.empty() ? lesson.steps : std::vector<LessonEntry::Step>{};
  if (steps.empty()) steps.push_back({"", {}, request.args.empty() ? lesson.args : request.args});
  if (!lesson.steps.empty()) {
    // Steps share files (a checkpoint) in a folder of their own, not the learner's tree.
    base.working_directory = programs.bin + "/../lesson-work/" + lesson.id;
    fs::create_directories(base.working_directory);
  }
  RunResult run;
  if (steps.size() > 1) run.document.kind = RunDocument::Kind::kSteps;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    ProcessOptions process = base;
    const Scenario step = scenario_of(steps[i].env, request.learner_env);
    process.env.insert(process.env.end(), step.env.begin(), step.env.end());
    process.argv = steps[i].args;
    if (steps.size() > 1 && request.on_step)
      request.on_step(i + 1, steps.size(), steps[i].title + ":" + step.banner + joined_args(steps[i].args));
    StepRun one = run_step(lesson, request, programs, process, run_program);
    if (request.json && !lesson.launched()) run.err += one.result.err;
    if (!request.json && request.after_step && one.result.signal == 0 && !one.result.timed_out) request.after_step(one.document);
    run.last = one.result;
    if (steps.size() > 1) {
      for (auto& part : one.document.parts) run.document.parts.push_back(std::move(part));
      if (request.json && one.document.parts.empty()) run.document.parts.push_back({one.result.out, std::nullopt, "no report", -1});
    } else {
      run.document = std::move(one.document);
    }
    if (one.result.ok()) continue;
    if (one.result.signal != 0 || one.result.timed_out) {
      run.outcome = one.result.timed_out ? Outcome::kTimedOut : Outcome::kCrashed;
      run.what = one.result.outcome(request.timeout_s);
    } else {
      run.outcome = Outcome::kChecksFailed;  // the program ran and reported an error (its report says which)
    }
    break;
  }
  return run;
}

}  // namespace gpulab::grading
