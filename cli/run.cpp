// gpulab run NN: runs a lesson (your exercise, or --solution) in its default scenario.
// Environment variables you set yourself win over the scenario's.
#include <cstdlib>
#include <iostream>

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

void run_lesson_program(const RunOptions& options) {
  const Manifest manifest = load_manifest();
  const LessonEntry& lesson = manifest.find(options.lesson);
  const std::string kind = options.solution ? "solution" : "lesson";
  ProcessOptions process;
  process.argv = {bin_dir() + "/" + kind + "-" + lesson.id};
  const auto& args = options.args.empty() ? lesson.args : options.args;
  for (const auto& arg : args) process.argv.push_back(arg);
  if (options.json) process.argv.push_back("--json");
  process.capture = false;
  process.timeout_s = options.timeout_s;
  std::string scenario;
  for (const auto& [name, value] : lesson.env) {
    const bool yours = std::getenv(name.c_str()) != nullptr;
    if (!yours) process.env.emplace_back(name, value);
    scenario += fmt::format(" {}={}{}", name, yours ? std::getenv(name.c_str()) : value, yours ? " (yours)" : "");
  }
  if (!options.json) {
    std::cerr << fmt::format("== lesson {}: {} ({}s/{}/main.cpp)\n", lesson.id, lesson.title,
                             options.solution ? "solution" : "lesson", lesson.directory());
    for (const auto& arg : args) scenario += " " + arg;
    if (!scenario.empty()) std::cerr << "   scenario:" << scenario << '\n';
    if (const auto note = visibility_note(process.env)) std::cerr << "   note: " << *note << '\n';
  }
  const ProcessResult result = run_process(process);
  if (result.ok()) return;
  if (result.signal != 0 || result.timed_out) {
    std::cerr << fmt::format("gpulab: lesson {} {}. Your files are untouched; fix the code and run it again.\n",
                             lesson.id, result.outcome(options.timeout_s));
    throw Exit{result.timed_out ? kTimedOut : kCrashed};
  }
  throw Exit{kChecksFailed};  // the program ran and reported an error (its report says which)
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
