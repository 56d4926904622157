// gpulab targets (internal): the build targets `run`/`check` need, so ./gpulab rebuilds
// just those before running them. Also validates the lesson number early.
// `check all` and `dev check` build the lesson programs themselves, one lesson's broken
// file failing that lesson only (check_all.cpp): the script builds just the checks.
#include <algorithm>
#include <iostream>

#include "commands.h"
#include "course/manifest.h"

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
  cmd->callback([options, cmd] {
    const bool grading = (options->command == "check" && options->lesson == "all") ||
                         (options->command == "dev" && options->lesson == "check");
    if (grading) {
      const std::vector<std::string> extras = cmd->remaining();  // options targets does not know
      auto has = [&](const std::string& flag) {
        return std::find(extras.begin(), extras.end(), flag) != extras.end() ||
               std::find(options->rest.begin(), options->rest.end(), flag) != options->rest.end();
      };
      std::cout << "gpulab_cli";
      // With --root the checks are built in the student's grading folder; --quick runs none.
      if (!has("--root") && !has("--quick"))
        for (const auto& lesson : load_manifest().lessons) std::cout << " lesson" << lesson.id << "-checks";
      std::cout << '\n';
      return;
    }
    const LessonEntry lesson = load_manifest().find(options->lesson);
    const std::string program = (options->solution ? "solution-" : "lesson-") + lesson.id;
    std::cout << program << (options->command == "check" ? " lesson" + lesson.id + "-checks" : "") << '\n';
  });
}

}  // namespace gpulab::cli
