// The class report's three forms (src/view/class_report.h): text, JSON and HTML.
#include <string>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "report/message_text.h"
#include "view/class_report.h"

using namespace gpulab::view;

namespace {

ClassReport one_lesson() {
  ClassReport report;
  report.students = 3;
  report.names = {"ann", "ben", "cat"};
  report.profile = "PyTorch 2.15.0 (CUDA 13.2 build)";
  LessonTally lesson;
  lesson.id = "05";
  lesson.title = "Threads <and> GPUs";
  lesson.students = 3;
  lesson.started = 3;
  lesson.passed = 2;
  QuestionTally where;
  where.number = 1;
  where.question = "Which GPU?";
  where.truth = "2";
  where.asked = 3;
  where.answers = {{"2", 2, true}, {"<script>", 1, false}};
  QuestionTally why;
  why.kind = QuestionTally::Kind::kExplain;
  why.number = 1;
  why.question = "Why?";
  why.choices = {"because", "therefore"};
  why.truth = "a";
  why.asked = 3;
  why.answers = {{"a", 1, true}, {"b", 0, false}};
  why.no_answer = 2;
  lesson.questions = {where, why};
  report.lessons = {lesson};
  report.problems = {{"dan", "no progress file", {}, false}, {"eve", "skipped lines", {2, 7}, true}};
  return report;
}

}  // namespace

TEST_CASE("percentages are of the students asked, rounded", "[class-report]") {
  CHECK(percent_text(2, 3) == "67%");
  CHECK(percent_text(0, 3) == "0%");
  CHECK(percent_text(1, 0) == "-");
}

TEST_CASE("the class report's text marks the truth and lists the students' problems", "[class-report]") {
  const std::string text = class_report_text(one_lesson());
  CHECK(text.find("3 students, truth: the shipped exercises run on PyTorch 2.15.0 (CUDA 13.2 build)") != std::string::npos);
  CHECK(text.find("passed 2 of 3 started (67%, self-reported)") != std::string::npos);
  CHECK(text.find("passed: self-reported") != std::string::npos);
  CHECK(text.find("✓ 2 ") != std::string::npos);
  CHECK(text.find("✓ a) because") != std::string::npos);
  CHECK(text.find("dan: no progress file; not counted") != std::string::npos);
  CHECK(text.find("eve: skipped lines (lines 2, 7); the rest is counted") != std::string::npos);
}

TEST_CASE("the class report's JSON has every count, the truth and the problems", "[class-report]") {
  const nlohmann::json json = class_report_json(one_lesson());
  CHECK(json["students"] == 3);
  CHECK(json["truth_run"] == true);
  const auto& question = json["lessons"][0]["questions"][0];
  CHECK(question["kind"] == "prediction");
  CHECK(question["truth"] == "2");
  CHECK(question["answers"][0]["count"] == 2);
  CHECK(question["answers"][0]["percent"] == 66.7);
  CHECK(question["answers"][0]["right"] == true);
  CHECK(json["lessons"][0]["questions"][1]["choices"][1] == "therefore");
  CHECK(json["lessons"][0]["questions"][1]["no_answer"] == 2);
  CHECK(json["problems"][1]["lines"] == nlohmann::json::array({2, 7}));
}

TEST_CASE("the class report's page is self-contained and escapes what students typed", "[class-report]") {
  const std::string html = class_report_html(one_lesson());
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(html.find("<script") == std::string::npos);  // no script, not even a student's
  CHECK(html.find("&lt;script&gt;") != std::string::npos);
  CHECK(html.find("Threads &lt;and&gt; GPUs") != std::string::npos);
  CHECK(html.find("src=") == std::string::npos);
  CHECK(html.find("<link") == std::string::npos);
  CHECK(html.find("class=\"right\"") != std::string::npos);
  CHECK(html.find("<svg") != std::string::npos);
}

namespace {

// Whether `text` is valid UTF-8 with no control character but the newline.
bool clean(const std::string& text) {
  std::string lines = text;
  for (char& c : lines)
    if (c == '\n') c = ' ';
  return gpulab::printable(lines) == lines;
}

}  // namespace

TEST_CASE("what a student wrote reaches no output raw: escape codes and invalid UTF-8 are replaced", "[class-report]") {
  ClassReport report = one_lesson();
  const std::string hostile = "\x1b[2J\x1b]0;owned\x07\xff\xfe\xc3";
  report.names.push_back(hostile);
  report.lessons[0].questions[0].answers.push_back({hostile, 1, false});
  report.problems.push_back({hostile, "names lesson " + hostile + ", which this course does not have", {}, true});
  const std::string text = class_report_text(report);
  CHECK(text.find('\x1b') == std::string::npos);
  CHECK(clean(text));
  CHECK(text.find("\xEF\xBF\xBD[2J") != std::string::npos);  // shown as U+FFFD, not dropped
  const std::string json = class_report_json(report).dump();  // throws on invalid UTF-8
  CHECK(json.find("\\u001b") == std::string::npos);
  CHECK(clean(json));
  const std::string html = class_report_html(report);
  CHECK(html.find('\x1b') == std::string::npos);
  CHECK(clean(html));
}

TEST_CASE("a problem's skipped lines are listed ten at most", "[class-report]") {
  ClassReport report = one_lesson();
  StudentProblem many{"fay", "skipped lines", {}, true};
  for (int line = 1; line <= 500; ++line) many.lines.push_back(line);
  report.problems = {many};
  const std::string text = class_report_text(report);
  CHECK(text.find("fay: skipped lines (lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 490 more); the rest is counted") !=
        std::string::npos);
}

TEST_CASE("with class grade's results, passed is graded, and every form says so", "[class-report]") {
  ClassReport report = one_lesson();
  report.passed_from_grades = true;
  report.lessons[0].graded = 4;
  report.lessons[0].passed = 1;
  const std::string text = class_report_text(report);
  CHECK(text.find("passed: class grade's results") != std::string::npos);
  CHECK(text.find("passed 1 of 4 graded (25%, class grade); 3 of 3 students started it") != std::string::npos);
  CHECK(text.find("self-reported") == std::string::npos);
  const nlohmann::json json = class_report_json(report);
  CHECK(json["passed_from"] == "class grade");
  CHECK(json["lessons"][0]["graded"] == 4);
  const std::string html = class_report_html(report);
  CHECK(html.find("passed (class grade)") != std::string::npos);
  CHECK(html.find("<th>graded</th>") != std::string::npos);

  const nlohmann::json self = class_report_json(one_lesson());
  CHECK(self["passed_from"] == "self-reported");
  CHECK(self["lessons"][0]["graded"].is_null());
  CHECK(class_report_html(one_lesson()).find("passed (self-reported)") != std::string::npos);
}
