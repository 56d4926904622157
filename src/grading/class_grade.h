// gpulab class grade: a whole class's trees graded on one machine. This build's library,
// checks and CLI are built once; each student's exercises are then compiled with this
// build's recipes (recipes.h) and graded in a box of their own (box.h), several students at
// a time. Each student gets a JSON and a JUnit report, the class a summary.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "grading/box.h"
#include "grading/class_names.h"  // student_names: the grades and the report call a class alike
#include "grading/grading.h"

namespace gpulab::grading {

struct ClassOptions {
  std::vector<std::string> students;  ///< their trees (each with lessons/)
  std::string out = "class-grades";   ///< <out>/<student>/grading.json, junit.xml; <out>/class.json
  unsigned jobs = 1;                  ///< students graded at once
  std::vector<std::string> lessons;   ///< ids; empty: every lesson
  double timeout_s = 120;             ///< per lesson's checks
  bool placement = false;             ///< also record where each lesson's tensors landed
  BoxLimits limits;
};

/// What became of one student.
struct StudentGrade {
  std::string name;    ///< the folder's name (made unique within the class)
  std::string status;  ///< graded, over_limit, no_result, not_a_tree
  std::string message;
  std::vector<std::string> limits_hit;
  nlohmann::json grading;  ///< grading_json's document (null without a result)
  std::string junit;
  double seconds = 0;
};

/// Grades every student; a line per student to `out` as each finishes. Throws
/// Failure(kUsage) on bad options or when no box can be made here, Failure(kBuildFailed)
/// when the grader's own programs do not build.
std::vector<StudentGrade> grade_class(const Manifest& manifest, const ClassOptions& options, std::ostream& out);

/// `class grade`'s last line: "\n17 students: 16 graded, 1 not (OUT/class.json)\n".
std::string class_summary_line(const std::vector<StudentGrade>& students, const std::string& out);

/// One student's <out>/<student>/grading.json: its name, status, limits hit, message and
/// `grading` (grading_json's document, null without a result). `class report --grades`
/// reads it back (classroom/class_report.h).
nlohmann::json student_grading_json(const StudentGrade& student);

/// The class summary (<out>/class.json).
nlohmann::json class_summary(const std::vector<StudentGrade>& students, const std::string& enforcement);

/// What grade-in-box printed, once checked.
struct BoxDocument {
  nlohmann::json grading;  ///< grading_json's document, its counts recomputed from its lessons
  std::string junit;
  bool disk_full = false;
};

/// The last line of a box's result as grade-in-box's document for `lesson_ids` (each graded
/// once, none else, a known status each); nullopt when it is not one, and the student is
/// then not graded. Parsed as untrusted text all the same (tests/fuzz/box_result_fuzz.cpp).
std::optional<BoxDocument> parse_box_result(const std::string& out, const std::vector<std::string>& lesson_ids);

/// In the box: grades /student's exercises with `recipes` and writes one JSON document
/// ({"grading", "junit", "disk_full"}) to `result_fd`, which it keeps to itself; lesson
/// lines go to `progress`.
void grade_in_box(const Manifest& manifest, const GradeOptions& options, int result_fd, std::ostream& progress);

}  // namespace gpulab::grading
