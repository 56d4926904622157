// gpulab class report DIR…: how a class answered each lesson's predictions and explain
// questions, against the truth the tutorial scored them with (docs/class.md). The counting
// and the truth run once per lesson are src/classroom/class_report.h's, the tables and the
// page src/view/class_report.h's; this file reads the options and writes the files.
#include <iostream>

#include "backend/backend.h"
#include "classroom/class_report.h"
#include "commands.h"
#include "view/class_report.h"

namespace gpulab::cli {
namespace {

struct ClassReportOptions {
  classroom::ReportRequest request;
  std::string json_file;
  std::string html_file;
};

void class_report(const ClassReportOptions& options, const Workspace& workspace) {
  std::size_t students = 0;
  const view::ClassReport report = classroom::make_report(workspace, options.request, std::cerr, students);
  std::cout << view::class_report_text(report);
  classroom::write_report(report, options.json_file, options.html_file, students, std::cout);
}

}  // namespace

void add_class_report(CLI::App& class_cmd, Workspace& workspace) {
  auto options = std::make_shared<ClassReportOptions>();
  auto* cmd = class_cmd.add_subcommand(
      "report", "how the class answered each lesson's predictions and explain questions, against the truth");
  cmd->add_option("dirs", options->request.dirs, "students' checkouts (each holds its .gpulab-progress)")->required();
  cmd->add_option("--json", options->json_file, "also write the report as JSON to this file");
  cmd->add_option("--html", options->html_file, "also write the report as an HTML page (charts) to this file");
  cmd->add_option("--grades", options->request.grades_dir,
                  "class grade's output folder (its --out): who passed comes from there, not the progress files");
  cmd->add_flag("--no-truth", options->request.no_truth, "do not run the lessons: explain questions' truth only");
  cmd->add_option("--timeout", options->request.timeout_s, "seconds each lesson's run may take")->capture_default_str();
  cmd->callback([options, &workspace] {
    options->request.profile = active_profile().name();
    class_report(*options, workspace);
  });
}

}  // namespace gpulab::cli
