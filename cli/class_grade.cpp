// gpulab class grade DIR…: a class's trees graded, each in a box (src/grading/class_grade.h);
// and grade-in-box, what runs in each box (not for people: hidden from --help).
#include <iostream>

#include "commands.h"
#include "grading/class_grade.h"
#include "report/outcome.h"

namespace gpulab::cli {
using grading::ClassOptions;
using grading::GradeOptions;

void add_class_grade(CLI::App& klass, Workspace& workspace) {
  auto options = std::make_shared<ClassOptions>();
  auto* grade = klass.add_subcommand("grade", "grade students' trees, each in a box of its own (docs/class.md)");
  grade->add_option("trees", options->students, "the students' trees (each with lessons/)")->required()->expected(-1);
  grade->add_option("--jobs,-j", options->jobs, "students graded at once")->capture_default_str();
  grade->add_option("--out,-o", options->out, "write <out>/<student>/grading.json and junit.xml, and <out>/class.json")
      ->capture_default_str();
  grade->add_option("--lessons", options->lessons, "only these lessons, e.g. 01,04")->delimiter(',');
  grade->add_option("--timeout", options->timeout_s, "seconds each lesson's checks may run")->capture_default_str();
  grade->add_flag("--placement", options->placement, "also record where each lesson's tensors landed (runs each lesson once more)");
  grade->add_option("--student-timeout", options->limits.wall_s, "seconds a student's whole box may run")->capture_default_str();
  grade->add_option("--processes", options->limits.processes, "processes a box may have at once")->capture_default_str();
  auto memory_gib = std::make_shared<double>(static_cast<double>(options->limits.memory_bytes >> 30));
  grade->add_option("--memory", *memory_gib, "GiB of memory a box may use")->capture_default_str();
  auto disk_mib = std::make_shared<double>(static_cast<double>(options->limits.disk_bytes >> 20));
  grade->add_option("--disk", *disk_mib, "MiB each of a box's writable folders may hold")->capture_default_str();
  grade->callback([options, memory_gib, disk_mib, &workspace] {
    if (*memory_gib <= 0 || *disk_mib <= 0 || options->limits.processes < 8 || options->limits.wall_s <= 0)
      throw Failure(Outcome::kUsage, "--memory, --disk and --student-timeout must be positive, --processes at least 8");
    options->limits.memory_bytes = static_cast<std::uint64_t>(*memory_gib * (1ull << 30));
    options->limits.disk_bytes = static_cast<std::uint64_t>(*disk_mib * (1ull << 20));
    const auto students = grading::grade_class(workspace.manifest(), *options, std::cout);
    std::cout << grading::class_summary_line(students, options->out);
    for (const auto& student : students)
      if (student.status != "graded") throw Ended{Outcome::kChecksFailed};
  });

  auto in_box = std::make_shared<GradeOptions>();
  in_box->placement = false;
  auto* box = klass.add_subcommand("grade-in-box", "");  // "": hidden
  box->group("");
  box->add_option("--recipes", in_box->recipes, "")->required();
  box->add_option("--root", in_box->root, "");
  box->add_option("--timeout", in_box->timeout_s, "");
  box->add_option("--lessons", in_box->lessons, "")->delimiter(',');
  box->add_flag("--placement", in_box->placement, "");
  box->add_option("--build-jobs", in_box->build_jobs, "");
  auto result_fd = std::make_shared<int>(-1);
  box->add_option("--result-fd", *result_fd, "")->required();
  box->callback([in_box, result_fd, &workspace] { grading::grade_in_box(workspace.manifest(), *in_box, *result_fd, std::cerr); });
}

void setup_class(CLI::App& app, Workspace& workspace) {
  auto* klass = app.add_subcommand("class", "for instructors: a class's trees at once: their predictions, their grades (docs/class.md)");
  klass->require_subcommand(1);
  add_class_report(*klass, workspace);
  add_class_grade(*klass, workspace);
}

}  // namespace gpulab::cli
