// gpulab run NN: builds a lesson (your exercise, or --solution) in process, runs it in its
// default scenario, then draws the node. Environment variables you set yourself win over
// the scenario's.
#include <iostream>

#include <fmt/format.h>

#include "commands.h"
#include "grading/runner.h"
#include "report/outcome.h"
#include "view/node_picture.h"

namespace gpulab::cli {
namespace {
struct RunOptions {
  std::string lesson;
  grading::RunRequest request;  ///< --solution, --json, --timeout, the arguments
  bool picture = true;  // the node picture after the run (not with --json)
  bool explain = false;  // how CUDA read CUDA_VISIBLE_DEVICES, after the run, even before the predictions
};

// The picture of what one run (a step, the one process, or every rank) wrote.
void print_picture(const RunDocument& document, bool explain) {
  view::PictureStyle style = view::stdout_style();
  style.explain = explain;
  const view::RunPicture picture = view::render_run_picture(document, style);
  std::cerr << picture.problems;
  std::cout << picture.out << std::flush;
}

// Where CUDA cut a CUDA_VISIBLE_DEVICES list short is the point of some lessons, and CUDA
// itself never says so: the explanation waits until the learner has answered the lesson's
// predictions (workspace's predicted), asked with --explain, or looks at the solution.
void run_lesson_program(const RunOptions& options, const Workspace& workspace) {
  const LessonEntry& lesson = workspace.lesson(options.lesson);
  grading::RunRequest request = options.request;
  workspace.build_for_command({lesson.program_target(request.solution)}, std::cerr);
  const bool explain = !request.json && (options.explain || request.solution || workspace.predicted(lesson.id));
  const grading::Scenario scenario = grading::scenario_of(lesson.env);
  if (!request.json) {
    std::cerr << run_banner(lesson, request.solution, scenario.banner, request.args);
    request.on_step = [](std::size_t i, std::size_t n, const std::string& what) {
      std::cerr << fmt::format("-- step {} of {}: {}\n", i, n, what);
    };
    request.on_launch = [](const std::string& command) { std::cerr << "   launched as: " << command << '\n'; };
    if (options.picture) request.after_step = [explain](const RunDocument& document) { print_picture(document, explain); };
  }
  const grading::RunResult run = grading::run_lesson_program(lesson, request, workspace.programs());
  if (request.json) {
    std::cerr << run.err;
    std::cout << (run.document.kind == RunDocument::Kind::kSingle ? run.last.out : run.document.json()) << std::flush;
  }
  if (run.outcome == Outcome::kCrashed || run.outcome == Outcome::kTimedOut)
    std::cerr << crash_line(lesson, run.what);
  // After the run, whatever its outcome (a lesson may stop on the very error it explains);
  // the picture says it when there is one.
  if (explain && !options.picture)
    if (const auto note = grading::visibility_note(scenario.env)) std::cerr << "   explain: " << *note << '\n';
  if (run.outcome != Outcome::kOk) throw Ended{run.outcome};
}
}  // namespace

void setup_run(CLI::App& app, Workspace& workspace) {
  auto options = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "build and run a lesson in its scenario");
  cmd->add_option("lesson", options->lesson, "lesson number, e.g. 04")->required();
  auto* solution = cmd->add_flag("--solution", options->request.solution, "run the reference solution instead of your exercise");
  if (workspace.student_edition()) solution->group("");  // a student edition has none: not in its help
  cmd->add_flag("--json", options->request.json, "print the lesson report as JSON (docs/report-schema.md)");
  cmd->add_flag("!--no-picture", options->picture, "no picture of the node (docs/node-picture.md) after the run");
  cmd->add_option("--timeout", options->request.timeout_s, "stop the program after this many seconds")->capture_default_str();
  cmd->add_flag("--explain", options->explain,
                "after the run, say how CUDA read CUDA_VISIBLE_DEVICES (shown anyway once the lesson's predictions are answered)");
  cmd->add_option("args", options->request.args, "arguments for the lesson program (after --)");
  cmd->callback([options, &workspace] {
    if (options->request.solution) workspace.require_solutions("--solution");
    run_lesson_program(*options, workspace);
  });
}

}  // namespace gpulab::cli
