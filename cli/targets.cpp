// gpulab targets (internal): the build targets `run`/`check` need, so ./gpulab rebuilds
// just those before running them. Also validates the lesson number early.
// `check all` and `dev check` build the lesson programs themselves, one lesson's broken
// file failing that lesson only (check_all.cpp): the script builds just the checks.
// `targets start [--lesson NN]`: two lines, what the tutorial's first question needs (its
// lesson's program) and then, in the order the learner will want them, everything else a
// learner runs, which ./gpulab builds in the background while the tutorial goes on.
#include <algorithm>
#include <iostream>

#include "commands.h"
#include "course/manifest.h"
#include "course/student_edition.h"
#include "report/outcome.h"
#include "tutor/progress.h"
#include "tutor/tutor.h"

namespace gpulab::cli {
namespace {
struct TargetsOptions {
  std::string command;
  std::string lesson;
  bool solution = false;
  std::vector<std::string> rest;
};

// The value after `flag` in `args` ("" when absent), e.g. start's --lesson.
std::string option_value(const std::vector<std::string>& args, const std::string& flag) {
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == flag) return args[i + 1];
  return "";
}

void print_start_targets(const std::string& lesson) {
  const Manifest manifest = load_manifest();
  const tutor::Progress progress = tutor::load_progress(tutor::progress_path(manifest.root));
  const std::size_t first = tutor::starting_lesson(manifest, progress, lesson);
  const std::size_t count = manifest.lessons.size();
  std::cout << "lesson-" << manifest.lessons[first].id << '\n';
  std::cout << "lesson" << manifest.lessons[first].id << "-checks";
  for (std::size_t k = 1; k < count; ++k) {  // the next lessons first, then the earlier ones
    const std::string& id = manifest.lessons[(first + k) % count].id;
    std::cout << " lesson-" << id << " lesson" << id << "-checks";
  }
  if (!is_student_edition(manifest.root))  // a student edition has no solutions to build
    for (std::size_t k = 0; k < count; ++k) std::cout << " solution-" << manifest.lessons[(first + k) % count].id;
  std::cout << '\n';
}

}  // namespace

void setup_targets(CLI::App& app) {
  auto options = std::make_shared<TargetsOptions>();
  auto* cmd = app.add_subcommand("targets", "(internal) build targets for run/check");
  cmd->group("");  // hidden from --help
  cmd->add_option("command", options->command)->required();
  cmd->add_option("lesson", options->lesson);  // required but for `start`
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
      // --quick runs no checks. (With --root too they are this build's.)
      if (!has("--quick"))
        for (const auto& lesson : load_manifest().lessons) std::cout << " lesson" << lesson.id << "-checks";
      std::cout << '\n';
      return;
    }
    if (options->command == "start") {
      print_start_targets(options->lesson.empty() ? option_value(cmd->remaining(), "--lesson") : options->lesson);
      return;
    }
    if (options->lesson.empty()) throw Failure(Outcome::kUsage, "targets: which lesson?");
    const Manifest manifest = load_manifest();
    const LessonEntry lesson = manifest.find(options->lesson);
    if (options->solution) require_solutions(manifest, "--solution");  // before ./gpulab builds a solution-NN
    const std::string program = (options->solution ? "solution-" : "lesson-") + lesson.id;
    std::cout << program << (options->command == "check" ? " lesson" + lesson.id + "-checks" : "") << '\n';
  });
}

}  // namespace gpulab::cli
