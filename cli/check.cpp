// gpulab check NN: builds lesson NN and its checks in process, runs the checks — the same
// ones CI runs against the solution — against your exercise, and says in the lesson's terms
// what is still wrong. gpulab check all: every lesson graded (src/grading), as JUnit and JSON.
#include <iostream>

#include <fmt/format.h>

#include "commands.h"
#include "grading/grading.h"
#include "grading/runner.h"
#include "report/outcome.h"

namespace gpulab::cli {
namespace {
using grading::GradeOptions;

// `check all`'s options, on the `check` subcommand.
void add_check_all_options(CLI::App& check, GradeOptions& options) {
  check.add_option("--junit", options.junit, "check all: write JUnit XML here (Catch2's reports, one testsuite per lesson)");
  check.add_option("--json", options.json, "check all: write each lesson's status, failed checks and placement as JSON here");
  check.add_option("--root", options.root, "check all: grade the exercises of this checkout (a student's) instead of yours");
  check.add_option("--build-dir", options.build_dir, "check all --root: build the student's programs here")
      ->default_str("build/grading/<name>-<hash>");
  check.add_option("--timeout", options.timeout_s, "seconds each lesson's checks may run")->capture_default_str();
  check.add_option("--lessons", options.lessons, "check all: only these lessons, e.g. 01,04")->delimiter(',');
  check.add_flag("--fail-fast", options.fail_fast, "check all: stop each lesson's checks at their first failure");
  check.add_flag("--no-placement", [&options](std::int64_t) { options.placement = false; },
                 "check all: do not run each lesson again to record where its tensors landed");
}

void run_check_all(const GradeOptions& options, const Workspace& workspace) {
  const grading::Grading grading = grading::grade(workspace.manifest(), options, std::cout);
  std::cout << grading_summary(grading);
  grading::write_grading_files(options, grading);
  if (grading.failed() > 0) throw Ended{Outcome::kChecksFailed};
}

struct CheckOptions {
  std::string lesson;
  grading::ChecksRequest request;  ///< --solution, --verbose (raw), --stretch
  grading::GradeOptions all;  ///< `check all`'s options; --timeout applies to one lesson too
};

void check_lesson(const CheckOptions& options, const Workspace& workspace) {
  const LessonEntry& lesson = workspace.lesson(options.lesson);
  grading::ChecksRequest request = options.request;
  request.timeout_s = options.all.timeout_s;
  workspace.build_for_command({lesson.program_target(request.solution), lesson.checks_target()}, std::cerr);
  std::cout << checks_header(lesson, request.stretch, request.solution);
  const grading::ChecksResult checks = grading::run_checks(lesson.id, request, workspace.programs());
  if (!checks.no_stretch_task && !request.raw && !checks.has_verdict) {
    std::cerr << fmt::format("gpulab: lesson {}: {}", lesson.id, checks.message);
    throw Ended{checks.outcome};
  }
  std::cout << verdict_lines(lesson, checks, request.stretch, request.raw);
  if (!checks.no_stretch_task && checks.outcome != Outcome::kOk) throw Ended{checks.outcome};
}
}  // namespace

void setup_check(CLI::App& app, Workspace& workspace) {
  auto options = std::make_shared<CheckOptions>();
  auto* cmd = app.add_subcommand("check", "check your exercise against the lesson's tests");
  cmd->add_option("lesson", options->lesson, "lesson number, e.g. 04, or all (every lesson, for grading)")->required();
  auto* solution = cmd->add_flag("--solution", options->request.solution, "check the reference solution instead");
  if (workspace.student_edition()) solution->group("");  // a student edition has none: not in its help
  cmd->add_flag("--verbose,-v", options->request.raw, "show the checks' raw output (Catch2's report)");
  cmd->add_flag("--stretch", options->request.stretch, "check the lesson's optional stretch task instead of its task");
  add_check_all_options(*cmd, options->all);
  cmd->callback([options, cmd, &workspace] {
    if (options->request.solution) workspace.require_solutions("--solution");
    if (options->request.stretch && options->lesson == "all")
      throw Failure(Outcome::kUsage, "--stretch checks one lesson's stretch task; `check all` grades the tasks");
    if (options->lesson == "all") {
      options->all.solution = options->request.solution;
      return run_check_all(options->all, workspace);
    }
    for (const char* only_all : {"--junit", "--json", "--root", "--build-dir", "--lessons", "--no-placement", "--fail-fast"})
      if (cmd->count(only_all) > 0) throw Failure(Outcome::kUsage, fmt::format("{} is for `check all`, not one lesson", only_all));
    check_lesson(*options, workspace);
  });
}

}  // namespace gpulab::cli
