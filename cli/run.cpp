// gpulab run NN: builds a lesson (your exercise, or --solution) in process, runs it in its
// default scenario, then draws the node. Environment variables you set yourself win over
// the scenario's.
#include <iostream>
#include <optional>

#include <fmt/format.h>

#include "commands.h"
#include "grading/runner.h"
#include "report/outcome.h"
#include "view/node_picture.h"

namespace gpulab::cli {
namespace {
struct RunOptions {
  std::string lesson;
  bool solution = false;
  bool json = false;
  bool picture = true;  // the node picture after the run (not with --json)
  double timeout_s = 120;
  bool explain = false;  // how CUDA read CUDA_VISIBLE_DEVICES, after the run, even before the predictions
  std::vector<std::string> args;
};

// The picture of what one run (a step, the one process, or every rank) wrote.
void print_picture(const RunDocument& document, bool explain) {
  view::PictureStyle style = view::stdout_style();
  style.explain = explain;
  if (document.kind == RunDocument::Kind::kRanks) {
    std::vector<view::RankReport> ranks;
    for (const auto& part : document.parts)
      if (part.report) ranks.push_back({part.rank, document.host_of(part.rank), *part.report});
      else std::cerr << "gpulab: no node picture: a rank's report is not valid (" << part.problem << ")\n";
    std::cout << '\n' << view::render_ranks_picture(ranks, style) << std::flush;
    return;
  }
  std::cout << '\n';
  if (document.parts.empty() || !document.parts.front().report) {
    if (!document.parts.empty()) std::cerr << "gpulab: no node picture: the report is not valid (" << document.parts.front().problem << ")\n";
    std::cout << "(no node picture: the program wrote no report)\n" << std::flush;
    return;
  }
  std::cout << view::render_node_picture(*document.parts.front().report, style) << std::flush;
}

// Where CUDA cut a CUDA_VISIBLE_DEVICES list short is the point of some lessons, and CUDA
// itself never says so: the explanation waits until the learner has answered the lesson's
// predictions (workspace's predicted), asked with --explain, or looks at the solution.
void run_lesson_program(const RunOptions& options, const Workspace& workspace) {
  const LessonEntry& lesson = workspace.lesson(options.lesson);
  workspace.build_for_command({lesson.program_target(options.solution)}, std::cerr);
  const bool explain = !options.json && (options.explain || options.solution || workspace.predicted(lesson.id));
  grading::RunRequest request;
  request.solution = options.solution;
  request.json = options.json;
  request.args = options.args;
  request.timeout_s = options.timeout_s;
  const grading::Scenario scenario = grading::scenario_of(lesson.env);
  if (!options.json) {
    std::cerr << fmt::format("== lesson {}: {} ({})\n", lesson.id, lesson.title, lesson.source_file(options.solution));
    std::string shown = scenario.banner;
    for (const auto& arg : options.args.empty() ? lesson.args : options.args) shown += " " + arg;
    if (!shown.empty()) std::cerr << "   scenario:" << shown << '\n';
    request.on_step = [](std::size_t i, std::size_t n, const std::string& what) {
      std::cerr << fmt::format("-- step {} of {}: {}\n", i, n, what);
    };
    request.on_launch = [](const std::string& command) { std::cerr << "   launched as: " << command << '\n'; };
    if (options.picture) request.after_step = [explain](const RunDocument& document) { print_picture(document, explain); };
  }
  const grading::RunResult run = grading::run_lesson(lesson, request, workspace.programs());
  if (options.json) {
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
  auto* solution = cmd->add_flag("--solution", options->solution, "run the reference solution instead of your exercise");
  if (workspace.student_edition()) solution->group("");  // a student edition has none: not in its help
  cmd->add_flag("--json", options->json, "print the lesson report as JSON (docs/report-schema.md)");
  cmd->add_flag("!--no-picture", options->picture, "no picture of the node (docs/node-picture.md) after the run");
  cmd->add_option("--timeout", options->timeout_s, "stop the program after this many seconds")->capture_default_str();
  cmd->add_flag("--explain", options->explain,
                "after the run, say how CUDA read CUDA_VISIBLE_DEVICES (shown anyway once the lesson's predictions are answered)");
  cmd->add_option("args", options->args, "arguments for the lesson program (after --)");
  cmd->callback([options, &workspace] {
    if (options->solution) workspace.require_solutions("--solution");
    run_lesson_program(*options, workspace);
  });
}

}  // namespace gpulab::cli
