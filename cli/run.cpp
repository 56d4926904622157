// gpulab run NN: runs a lesson (your exercise, or --solution) in its default scenario.
// Environment variables you set yourself win over the scenario's.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "commands.h"
#include "exit_codes.h"
#include "gpulab/manifest.h"
#include "gpulab/node.h"
#include "gpulab/process.h"
#include "gpulab/visibility.h"

namespace gpulab::cli {
namespace {
struct RunOptions {
  std::string lesson;
  bool solution = false;
  bool json = false;
  double timeout_s = 120;
  std::vector<std::string> args;
};

// What the lesson will see of a CUDA_VISIBLE_DEVICES that CUDA cuts short (CUDA says nothing).
std::optional<std::string> visibility_note(const std::vector<std::pair<std::string, std::optional<std::string>>>& env) {
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
    return explain_visibility(node, effective("CUDA_VISIBLE_DEVICES"), parse_device_order(order ? order->c_str() : nullptr));
  } catch (const NodeError&) {
    return std::nullopt;  // the lesson itself reports a broken node
  }
}

using Env = std::vector<std::pair<std::string, std::optional<std::string>>>;

// The scenario's variables, unless the learner set them: theirs win, and the banner says so.
Env scenario_env(const std::vector<std::pair<std::string, std::string>>& variables, std::string& banner) {
  Env env;
  for (const auto& [name, value] : variables) {
    const char* yours = std::getenv(name.c_str());
    if (yours == nullptr) env.emplace_back(name, value);
    banner += fmt::format(" {}={}{}", name, yours != nullptr ? yours : value, yours != nullptr ? " (yours)" : "");
  }
  return env;
}

// A multi-process lesson's --json: every rank's report (each writes its own file) and the
// launcher's summary, as one document.
void print_launched_json(const std::string& reports, const std::string& summary) {
  nlohmann::json out = {{"ranks", nlohmann::json::array()}};
  std::ifstream summary_file(summary);
  if (summary_file) out["launch"] = nlohmann::json::parse(summary_file, nullptr, /*allow_exceptions=*/false);
  for (int rank = 0;; ++rank) {
    std::ifstream file(reports + "/rank" + std::to_string(rank) + ".json");
    if (!file) break;
    out["ranks"].push_back(nlohmann::json::parse(file, nullptr, /*allow_exceptions=*/false));
  }
  std::cout << out.dump(2) << '\n';
}

ProcessResult run_step(const RunOptions& options, const LessonEntry& lesson, ProcessOptions process) {
  const std::string program = bin_dir() + "/" + (options.solution ? "solution" : "lesson") + "-" + lesson.id;
  if (!lesson.launched()) {
    process.argv.insert(process.argv.begin(), program);
    if (options.json) process.argv.push_back("--json");
    return run_process(process);
  }
  std::vector<std::string> launch = {bin_dir() + "/gpulab", "launch", "--nproc-per-node", std::to_string(lesson.nproc_per_node)};
  if (lesson.nnodes > 1) launch.insert(launch.end(), {"--nnodes", std::to_string(lesson.nnodes)});
  if (!options.json) {
    std::string shown = "gpulab launch";
    for (std::size_t i = 2; i < launch.size(); ++i) shown += " " + launch[i];
    shown += " -- build/bin/" + program.substr(program.rfind('/') + 1);
    for (const auto& arg : process.argv) shown += " " + arg;
    std::cerr << "   launched as: " << shown << '\n';
  }
  std::string reports;
  if (options.json) {
    std::string folder = (std::filesystem::temp_directory_path() / "gpulab-run-XXXXXX").string();
    if (mkdtemp(folder.data()) == nullptr) throw std::runtime_error("cannot make a folder for the ranks' reports");
    reports = folder;
    process.env.emplace_back("GPULAB_REPORT_DIR", reports);
    launch.insert(launch.end(), {"--quiet", "--summary-json", reports + "/launch.json"});
  }
  launch.push_back("--");
  launch.push_back(program);
  process.argv.insert(process.argv.begin(), launch.begin(), launch.end());
  if (options.json) process.argv.push_back("--json");
  if (options.json) process.capture = true;  // the ranks' prefixed output is not JSON
  const ProcessResult result = run_process(process);
  if (options.json) {
    print_launched_json(reports, reports + "/launch.json");
    std::error_code ignored;
    std::filesystem::remove_all(reports, ignored);
  }
  return result;
}

void run_lesson_program(const RunOptions& options) {
  const Manifest manifest = load_manifest();
  const LessonEntry& lesson = manifest.find(options.lesson);
  const auto& args = options.args.empty() ? lesson.args : options.args;
  std::string scenario;
  ProcessOptions base;
  base.capture = false;
  base.timeout_s = options.timeout_s;
  base.env = scenario_env(lesson.env, scenario);
  if (!options.json) {
    std::cerr << fmt::format("== lesson {}: {} ({}s/{}/main.cpp)\n", lesson.id, lesson.title,
                             options.solution ? "solution" : "lesson", lesson.directory());
    for (const auto& arg : args) scenario += " " + arg;
    if (!scenario.empty()) std::cerr << "   scenario:" << scenario << '\n';
    if (const auto note = visibility_note(base.env)) std::cerr << "   note: " << *note << '\n';
  }
  // One run, or each step in order (arguments the learner gives make it one run).
  std::vector<LessonEntry::Step> steps = options.args.empty() ? lesson.steps : std::vector<LessonEntry::Step>{};
  if (steps.empty()) steps.push_back({"", {}, args});
  if (!lesson.steps.empty()) {
    // Steps share files (a checkpoint) in a folder of their own, not the learner's tree.
    base.working_directory = bin_dir() + "/../lesson-work/" + lesson.id;
    std::filesystem::create_directories(base.working_directory);
  }
  // Several steps print one JSON document together: {"steps": [report, report]}.
  const bool collect = options.json && steps.size() > 1;
  nlohmann::json collected = {{"steps", nlohmann::json::array()}};
  auto print_collected = [&] {
    if (collect) std::cout << collected.dump(2) << '\n';
  };
  for (std::size_t i = 0; i < steps.size(); ++i) {
    ProcessOptions process = base;
    process.capture = collect;
    std::string banner;
    for (auto& variable : scenario_env(steps[i].env, banner)) process.env.push_back(std::move(variable));
    process.argv = steps[i].args;
    if (steps.size() > 1 && !options.json)
      std::cerr << fmt::format("-- step {} of {}: {}:{}{}\n", i + 1, steps.size(), steps[i].title, banner,
                               [&] { std::string a; for (const auto& arg : steps[i].args) a += " " + arg; return a; }());
    const ProcessResult result = run_step(options, lesson, process);
    if (collect) {
      std::cerr << result.err;
      collected["steps"].push_back(nlohmann::json::parse(result.out, nullptr, /*allow_exceptions=*/false));
    }
    if (result.ok()) {
      if (i + 1 == steps.size()) print_collected();
      continue;
    }
    print_collected();
    if (result.signal != 0 || result.timed_out) {
      std::cerr << fmt::format("gpulab: lesson {} {}. Your files are untouched; fix the code and run it again.\n",
                               lesson.id, result.outcome(options.timeout_s));
      throw Exit{result.timed_out ? kTimedOut : kCrashed};
    }
    throw Exit{kChecksFailed};  // the program ran and reported an error (its report says which)
  }
}
}  // namespace

void setup_run(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "build and run a lesson in its scenario");
  cmd->add_option("lesson", options->lesson, "lesson number, e.g. 04")->required();
  cmd->add_flag("--solution", options->solution, "run the reference solution instead of your exercise");
  cmd->add_flag("--json", options->json, "print the lesson report as JSON (docs/report-schema.md)");
  cmd->add_option("--timeout", options->timeout_s, "stop the program after this many seconds")->capture_default_str();
  cmd->add_option("args", options->args, "arguments for the lesson program (after --)");
  cmd->callback([options] { run_lesson_program(*options); });
}

}  // namespace gpulab::cli
