// The class report (`gpulab class report`, docs/class.md): how a class answered each
// lesson's prediction and explain questions, against the truth, rendered three ways: a
// text table, JSON and a self-contained HTML page (inline CSS and SVG, no script). The
// figures come from the classroom module (src/classroom/class_report.h); this file only
// shows them. Every string of a ClassReport is shown through printable()
// (report/message_text.h): what a student wrote never reaches a terminal, JSON or HTML raw.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace gpulab::view {

/// How many students gave one answer.
struct AnswerCount {
  std::string answer;  ///< canonical ("3", "none", "0,2") or an explain letter ("b")
  int count = 0;
  bool right = false;  ///< the answer is the truth
};

/// One question of a lesson: a prediction, or the explain question after it.
struct QuestionTally {
  enum class Kind { kPrediction, kExplain };
  Kind kind = Kind::kPrediction;
  int number = 0;            ///< the prediction's number in the lesson, from 1 (its explain question shares it)
  std::string question;      ///< as the tutorial asks it
  std::vector<std::string> choices;  ///< explain questions: the choices a), b), …
  std::optional<std::string> truth;  ///< nullopt: not known (no run, or the run could not tell)
  std::vector<AnswerCount> answers;  ///< most given first; "-" and missing answers are in no_answer
  int no_answer = 0;
  int asked = 0;  ///< the students who started the lesson: the 100%
};

/// One lesson: who started and passed it, and its questions.
struct LessonTally {
  std::string id;
  std::string title;
  std::string scenario;    ///< " CUDA_VISIBLE_DEVICES=2,3,4,5" ("" none)
  int students = 0;        ///< every student read
  int started = 0;         ///< the students whose progress names the lesson
  int passed = 0;          ///< self-reported (progress files) or, with `graded`, class grade's
  std::optional<int> graded;  ///< with class grade's results: the students it graded in this lesson
  std::string truth_note;  ///< where the predictions' truth came from, or why it is missing
  std::vector<QuestionTally> questions;  ///< each prediction, then its explain question
};

/// A student whose tree could not be read whole. `counted`: what could be read is in the report.
struct StudentProblem {
  std::string student;  ///< the student's name (grading::student_names), or "class.json" for the grades
  std::string what;     ///< "no progress file (.gpulab-progress)", "skipped lines it cannot read", …
  std::vector<int> lines;  ///< the progress file's skipped lines, from 1
  bool counted = false;
};

struct ClassReport {
  int students = 0;               ///< the students whose progress was read
  std::vector<std::string> names;  ///< their folders' names, as given
  std::string profile;            ///< the software profile the truth was run with, "PyTorch 2.15.0 (CUDA 13.2 build)"
  bool truth_run = true;          ///< false: --no-truth, the predictions have no truth
  bool passed_from_grades = false;  ///< true: "passed" is class grade's (--grades); false: self-reported
  std::vector<LessonTally> lessons;      ///< the lessons some student started, in the manifest's order
  std::vector<StudentProblem> problems;  ///< in the order the folders were given
};

/// "62%": `count` of `of`, rounded; "-" when `of` is 0.
std::string percent_text(int count, int of);

/// The report as a table, for the terminal.
std::string class_report_text(const ClassReport& report);

/// The report as JSON (docs/class.md, "The JSON").
nlohmann::json class_report_json(const ClassReport& report);

/// The report as a self-contained HTML page: a bar per answer, the right one marked.
std::string class_report_html(const ClassReport& report);

}  // namespace gpulab::view
