// gpulab targets (internal): the build targets `run`/`check` need, so ./gpulab rebuilds
// just those before running them. Also validates the lesson number early.
#include <iostream>

#include "commands.h"
#include "gpulab/manifest.h"

namespace gpulab::cli {
namespace {
struct TargetsOptions {
  std::string command;
  std::string lesson;
  bool solution = false;
  std::vector<std::string> rest;
};
}  // namespace

void setup_targets(CLI::App& app) {
  auto options = std::make_shared<TargetsOptions>();
  auto* cmd = app.add_subcommand("targets", "(internal) build targets for run/check");
  cmd->group("");  // hidden from --help
  cmd->add_option("command", options->command)->required();
  cmd->add_option("lesson", options->lesson)->required();
  cmd->add_flag("--solution", options->solution);
  cmd->add_option("rest", options->rest);
  cmd->allow_extras();
  cmd->callback([options] {
    const LessonEntry lesson = load_manifest().find(options->lesson);
    const std::string program = (options->solution ? "solution-" : "lesson-") + lesson.id;
    std::cout << program << (options->command == "check" ? " lesson" + lesson.id + "-checks" : "") << '\n';
  });
}

}  // namespace gpulab::cli
