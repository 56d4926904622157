// Any bytes as a student's progress file, through the class report: read (parse_progress),
// counted (tally) and shown (text, JSON, HTML) without a crash, and every output valid
// UTF-8 with no control character but the newline: nothing a student writes reaches the
// instructor's terminal, JSON or page raw (classroom/class_report.h, view/class_report.h).
// The input is also the student's folder's name, and a second student's file.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "classroom/class_report.h"
#include "fuzz_text.h"
#include "grading/class_names.h"
#include "view/class_report.h"

using namespace gpulab;

namespace {

// A lesson with a prediction and its explain question, then one without.
Manifest course() {
  Manifest manifest;
  LessonEntry lesson;
  lesson.id = "01";
  lesson.title = "Meet the node";
  Prediction count;
  count.question = "How many?";
  count.observe = "visible_devices";
  count.explain = Prediction::Explain{"Why?", {"a reason", "another"}, 0};
  Prediction where;
  where.question = "Where?";
  where.observe = "tensor";
  where.subject = "x";
  lesson.predictions = {count, where};
  manifest.lessons.push_back(lesson);
  return manifest;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Manifest manifest = course();
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<classroom::StudentTree> students(2);
  students[0].name = grading::student_name("class/" + text.substr(0, 80));
  students[0].progress = parse_progress(text, &students[0].skipped);
  students[1].name = "ben";
  students[1].progress = parse_progress("lesson 01 passed\nanswers 01 " + text, &students[1].skipped);
  for (const auto& student : students) {
    const char c = student.name.empty() ? '/' : student.name[0];
    if (student.name.empty() || student.name.find('/') != std::string::npos || c == '.' ||
        student.name == grading::kClassSummary || !fuzz::shown_safely(student.name))
      std::abort();
  }
  // The other strings of a report, from the input's start too (short: the progress file is
  // what this harness is about).
  const std::string head = text.substr(0, 24);
  std::map<std::string, classroom::LessonTruth> truths = {{"01", {{text.substr(0, 8), std::nullopt}, head}}};
  const classroom::GradesRead grades{head, {head}};
  // Self-reported or with class grade's results, as the input's size says (one report a run: fast).
  const view::ClassReport report = classroom::tally(manifest, students, truths, true, head, size % 2 == 0 ? nullptr : &grades);
  if (!fuzz::shown_safely(view::class_report_text(report))) std::abort();
  if (!fuzz::shown_safely(view::class_report_json(report).dump(1))) std::abort();  // dump throws on invalid UTF-8
  if (!fuzz::shown_safely(view::class_report_html(report))) std::abort();
  return 0;
}
