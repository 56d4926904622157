// Any text as class grade's class.json or a student's grading.json, read by `class report
// --grades` (classroom/class_report.h): accepted only as what class grade writes (known
// statuses, each lesson once, the student's own name), refused with a reason otherwise,
// never a crash; what is accepted is shown safely whatever its names hold.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "classroom/class_report.h"
#include "fuzz_text.h"
#include "view/class_report.h"

using namespace gpulab;

namespace {

bool known_lessons(const classroom::Grade& grade) {
  static const std::set<std::string> lesson = {"passed", "failed", "build_failed", "crashed", "timed_out"};
  static const std::set<std::string> student = {"graded", "over_limit", "no_result", "not_a_tree"};
  if (student.count(grade.status) == 0) return false;
  for (const auto& [id, status] : grade.lessons)
    if (id.empty() || lesson.count(status) == 0) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string why;
  const auto summary = classroom::parse_class_summary(text, why);
  if (!summary && why.empty()) std::abort();
  why.clear();
  const auto grade = classroom::parse_student_grading(text, "ann", why);
  if (!grade && why.empty()) std::abort();
  if (grade && !known_lessons(*grade)) std::abort();

  Manifest manifest;
  LessonEntry lesson;
  lesson.id = "01";
  lesson.title = "Meet the node";
  manifest.lessons.push_back(lesson);
  std::vector<classroom::StudentTree> students;
  classroom::GradesRead read;
  if (summary) {
    for (const auto& [name, listed] : *summary) {
      if (!known_lessons(listed)) std::abort();
      classroom::StudentTree student;
      student.name = name;  // as a tampered class.json names them: shown safely all the same
      student.grade = listed;
      students.push_back(std::move(student));
      read.not_given.push_back(name);
    }
  }
  if (grade) {
    classroom::StudentTree ann;
    ann.name = "ann";
    ann.grade = grade;
    students.push_back(std::move(ann));
  }
  const view::ClassReport report = classroom::tally(manifest, students, {}, false, "", &read);
  for (const auto& shown : report.lessons)
    if (!shown.graded || shown.passed < 0 || shown.passed > *shown.graded) std::abort();
  if (!fuzz::shown_safely(view::class_report_text(report))) std::abort();
  if (!fuzz::shown_safely(view::class_report_json(report).dump(1))) std::abort();
  if (!fuzz::shown_safely(view::class_report_html(report))) std::abort();
  return 0;
}
