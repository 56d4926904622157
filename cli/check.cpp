// gpulab check NN: runs lesson NN's checks — the same ones CI runs against the solution —
// against your exercise, and says in the lesson's terms what is still wrong.
#include <iostream>

#include <fmt/format.h>

#include "check_all.h"
#include "commands.h"
#include "course/manifest.h"
#include "course/student_edition.h"
#include "grading/runner.h"
#include "report/outcome.h"
#include "view/verdict_text.h"

namespace gpulab::cli {
namespace {
struct CheckOptions {
  std::string lesson;
  bool solution = false;
  bool verbose = false;
  bool stretch = false;  ///< the lesson's optional stretch task instead of its task
  grading::GradeOptions all;  ///< `check all`'s options; --timeout applies to one lesson too
};

void check_lesson(const CheckOptions& options) {
  const Manifest manifest = load_manifest();
  const LessonEntry& lesson = manifest.find(options.lesson);
  const std::string what = options.stretch ? "stretch task" : "task";
  std::cout << fmt::format("== lesson {}: checking {}'s {} ({}s/{}/main.cpp)\n", lesson.id,
                           options.solution ? "the solution" : "your exercise", what, options.solution ? "solution" : "lesson",
                           lesson.directory());
  grading::ChecksRequest request;
  request.solution = options.solution;
  request.stretch = options.stretch;
  request.raw = options.verbose;
  request.timeout_s = options.all.timeout_s;
  const grading::ChecksResult checks = grading::run_checks(lesson.id, request, grading::this_build(manifest));
  if (checks.no_stretch_task) {
    std::cout << fmt::format("lesson {} has no stretch task.\n", lesson.id);
    return;
  }
  if (!options.verbose && !checks.has_verdict) {
    std::cerr << fmt::format("gpulab: lesson {}: {}", lesson.id, checks.message);
    throw Ended{checks.outcome};
  }
  if (!options.verbose) std::cout << view::render_verdict(checks.verdict);
  if (checks.outcome == Outcome::kOk) {
    const std::string count =
        options.verbose ? "" : fmt::format(" ({} of {})", checks.verdict.passed(), checks.verdict.cases.size());
    std::cout << fmt::format("\nlesson {}: the {} passes its checks{}.\n", lesson.id, what, count);
    if (!options.stretch && !lesson.stretch.empty())
      std::cout << fmt::format("Stretch (optional): {}\n  ./gpulab check {} --stretch\n", lesson.stretch, lesson.id);
    return;
  }
  if (options.verbose) {
    std::cout << fmt::format("\nlesson {}: not yet. Stuck? ./gpulab hint {}\n", lesson.id, lesson.id);
    throw Ended{checks.outcome};
  }
  if (!checks.program_ends.empty()) std::cout << "\nYour program " << checks.program_ends;
  std::cout << fmt::format("\nlesson {}: not yet — {} of {} checks failed. Stuck? ./gpulab hint {}\n", lesson.id,
                           checks.verdict.failed(), checks.verdict.cases.size(), lesson.id);
  throw Ended{checks.outcome};
}
}  // namespace

void setup_check(CLI::App& app) {
  auto options = std::make_shared<CheckOptions>();
  auto* cmd = app.add_subcommand("check", "check your exercise against the lesson's tests");
  cmd->add_option("lesson", options->lesson, "lesson number, e.g. 04, or all (every lesson, for grading)")->required();
  auto* solution = cmd->add_flag("--solution", options->solution, "check the reference solution instead");
  if (is_student_edition(source_root())) solution->group("");  // a student edition has none: not in its help
  cmd->add_flag("--verbose,-v", options->verbose, "show the checks' raw output (Catch2's report)");
  cmd->add_flag("--stretch", options->stretch, "check the lesson's optional stretch task instead of its task");
  add_check_all_options(*cmd, options->all);
  cmd->callback([options, cmd] {
    if (options->solution) require_solutions(load_manifest(), "--solution");
    if (options->stretch && options->lesson == "all")
      throw Failure(Outcome::kUsage, "--stretch checks one lesson's stretch task; `check all` grades the tasks");
    if (options->lesson == "all") {
      options->all.solution = options->solution;
      return run_check_all(options->all);
    }
    for (const char* only_all : {"--junit", "--json", "--root", "--build-dir", "--lessons", "--no-placement", "--fail-fast"})
      if (cmd->count(only_all) > 0) throw Failure(Outcome::kUsage, fmt::format("{} is for `check all`, not one lesson", only_all));
    check_lesson(*options);
  });
}

}  // namespace gpulab::cli
