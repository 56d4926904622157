// gpulab check NN: builds lesson NN and its checks in process, runs its checks — the same ones CI runs against the solution —
// against your exercise, and says in the lesson's terms what is still wrong.
#include <iostream>

#include <fmt/format.h>

#include "check_all.h"
#include "commands.h"
#include "grading/runner.h"
#include "report/outcome.h"

namespace gpulab::cli {
namespace {
struct CheckOptions {
  std::string lesson;
  bool solution = false;
  bool verbose = false;
  bool stretch = false;  ///< the lesson's optional stretch task instead of its task
  grading::GradeOptions all;  ///< `check all`'s options; --timeout applies to one lesson too
};

void check_lesson(const CheckOptions& options, const Workspace& workspace) {
  const LessonEntry& lesson = workspace.lesson(options.lesson);
  workspace.build_for_command({lesson.program_target(options.solution), lesson.checks_target()}, std::cerr);
  std::cout << checks_header(lesson, options.stretch, options.solution);
  grading::ChecksRequest request;
  request.solution = options.solution;
  request.stretch = options.stretch;
  request.raw = options.verbose;
  request.timeout_s = options.all.timeout_s;
  const grading::ChecksResult checks = grading::run_checks(lesson.id, request, workspace.programs());
  if (checks.no_stretch_task) {
    std::cout << fmt::format("lesson {} has no stretch task.\n", lesson.id);
    return;
  }
  if (!options.verbose && !checks.has_verdict) {
    std::cerr << fmt::format("gpulab: lesson {}: {}", lesson.id, checks.message);
    throw Ended{checks.outcome};
  }
  std::cout << verdict_lines(lesson, checks, options.stretch, options.verbose);
  if (checks.outcome != Outcome::kOk) throw Ended{checks.outcome};
}
}  // namespace

void setup_check(CLI::App& app, Workspace& workspace) {
  auto options = std::make_shared<CheckOptions>();
  auto* cmd = app.add_subcommand("check", "check your exercise against the lesson's tests");
  cmd->add_option("lesson", options->lesson, "lesson number, e.g. 04, or all (every lesson, for grading)")->required();
  auto* solution = cmd->add_flag("--solution", options->solution, "check the reference solution instead");
  if (workspace.student_edition()) solution->group("");  // a student edition has none: not in its help
  cmd->add_flag("--verbose,-v", options->verbose, "show the checks' raw output (Catch2's report)");
  cmd->add_flag("--stretch", options->stretch, "check the lesson's optional stretch task instead of its task");
  add_check_all_options(*cmd, options->all);
  cmd->callback([options, cmd, &workspace] {
    if (options->solution) workspace.require_solutions("--solution");
    if (options->stretch && options->lesson == "all")
      throw Failure(Outcome::kUsage, "--stretch checks one lesson's stretch task; `check all` grades the tasks");
    if (options->lesson == "all") {
      options->all.solution = options->solution;
      return run_check_all(options->all, workspace);
    }
    for (const char* only_all : {"--junit", "--json", "--root", "--build-dir", "--lessons", "--no-placement", "--fail-fast"})
      if (cmd->count(only_all) > 0) throw Failure(Outcome::kUsage, fmt::format("{} is for `check all`, not one lesson", only_all));
    check_lesson(*options, workspace);
  });
}

}  // namespace gpulab::cli
