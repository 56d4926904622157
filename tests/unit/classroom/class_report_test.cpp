// The class report's counting (src/classroom/class_report.h): tally() over parsed progress,
// and read_students() over students' trees.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "classroom/class_report.h"

using namespace gpulab;
using namespace gpulab::classroom;

namespace {

// Lesson 04: a prediction with an explain question (answer b), then one without.
Manifest course() {
  Manifest manifest;
  LessonEntry lesson;
  lesson.id = "04";
  lesson.slug = "which-gpu";
  lesson.title = "Which GPU?";
  lesson.env = {{"CUDA_VISIBLE_DEVICES", "2,3,4,5"}};
  Prediction where;
  where.question = "Which physical GPU?";
  where.observe = "tensor";
  where.subject = "x";
  where.explain = Prediction::Explain{"Why?", {"first", "second", "third"}, 1};
  Prediction used;
  used.question = "Which GPUs are used?";
  used.observe = "gpus_used";
  lesson.predictions = {where, used};
  manifest.lessons.push_back(lesson);
  LessonEntry other = lesson;
  other.id = "05";
  other.title = "Threads";
  manifest.lessons.push_back(other);
  return manifest;
}

StudentTree student(const std::string& name, const std::string& progress_text) {
  StudentTree tree;
  tree.name = name;
  tree.progress = tutor::parse_progress(progress_text, &tree.skipped);
  return tree;
}

const view::AnswerCount* answer(const view::QuestionTally& question, const std::string& text) {
  for (const auto& a : question.answers)
    if (a.answer == text) return &a;
  return nullptr;
}

std::map<std::string, LessonTruth> truth_04(std::optional<std::string> first, std::optional<std::string> second) {
  return {{"04", LessonTruth{{std::move(first), std::move(second)}, "the run"}}};
}

}  // namespace

TEST_CASE("the class report counts each answer against the truth, a dash or a missing answer as none", "[classroom]") {
  const std::vector<StudentTree> students = {
      student("ann", "lesson 04 passed predictions 2/2 explained 1/1\nanswers 04 predicted 3 none explained b\n"),
      student("ben", "lesson 04 started predictions 0/2 explained 0/1\nanswers 04 predicted 5 - explained a\n"),
      student("cat", "lesson 04 started\n"),  // entered the lesson, answered nothing yet
      student("dan", "lesson 05 started\n"),
  };
  const view::ClassReport report = tally(course(), students, truth_04("3", "none"), true, "PyTorch 9.9.9");
  CHECK(report.students == 4);
  CHECK(report.profile == "PyTorch 9.9.9");
  REQUIRE(report.lessons.size() == 2);  // manifest order: 04, then 05
  const view::LessonTally& lesson = report.lessons[0];
  CHECK(lesson.id == "04");
  CHECK(lesson.students == 4);
  CHECK(lesson.started == 3);
  CHECK(lesson.passed == 1);
  CHECK(lesson.scenario == " CUDA_VISIBLE_DEVICES=2,3,4,5");
  CHECK(lesson.truth_note == "the run");
  REQUIRE(lesson.questions.size() == 3);  // prediction 1, its explain question, prediction 2

  const auto& where = lesson.questions[0];
  CHECK(where.kind == view::QuestionTally::Kind::kPrediction);
  CHECK(where.asked == 3);
  CHECK(where.no_answer == 1);
  REQUIRE(answer(where, "3"));
  CHECK(answer(where, "3")->count == 1);
  CHECK(answer(where, "3")->right);
  REQUIRE(answer(where, "5"));
  CHECK(answer(where, "5")->count == 1);
  CHECK_FALSE(answer(where, "5")->right);

  const auto& why = lesson.questions[1];
  CHECK(why.kind == view::QuestionTally::Kind::kExplain);
  CHECK(why.number == 1);
  CHECK(why.truth == std::optional<std::string>("b"));
  REQUIRE(why.answers.size() == 3);  // every choice, in order, given or not
  CHECK(why.answers[0].answer == "a");
  CHECK(why.answers[0].count == 1);
  CHECK(why.answers[1].answer == "b");
  CHECK(why.answers[1].count == 1);
  CHECK(why.answers[1].right);
  CHECK(why.answers[2].count == 0);
  CHECK(why.no_answer == 1);

  const auto& used = lesson.questions[2];
  CHECK(used.number == 2);
  REQUIRE(answer(used, "none"));
  CHECK(answer(used, "none")->count == 1);
  CHECK(answer(used, "none")->right);
  CHECK(used.no_answer == 2);  // ben's "-" and cat's missing answer

  CHECK(report.lessons[1].started == 1);
  CHECK(report.problems.empty());
}

TEST_CASE("the truth is shown even when nobody gave it, and an unknown truth marks no answer right", "[classroom]") {
  const std::vector<StudentTree> students = {student("ann", "answers 04 predicted 5 2,3 explained c\n")};
  const view::ClassReport report = tally(course(), students, truth_04("3", std::nullopt), true, "");
  const auto& where = report.lessons.at(0).questions.at(0);
  REQUIRE(answer(where, "3"));
  CHECK(answer(where, "3")->count == 0);
  CHECK(answer(where, "3")->right);
  CHECK(where.answers.front().answer == "5");  // the most given first
  const auto& used = report.lessons.at(0).questions.at(2);
  CHECK_FALSE(used.truth);
  for (const auto& a : used.answers) CHECK_FALSE(a.right);

  const view::ClassReport untruthful = tally(course(), students, {}, false, "");
  CHECK_FALSE(untruthful.truth_run);
  CHECK_FALSE(untruthful.lessons.at(0).questions.at(0).truth);
  CHECK(untruthful.lessons.at(0).questions.at(1).truth == std::optional<std::string>("b"));  // the answer key
}

TEST_CASE("a student's problems are listed, and what can be read is still counted", "[classroom]") {
  StudentTree missing;
  missing.name = "eve";
  missing.problem = "no progress file";
  const std::vector<StudentTree> students = {
      student("ann", "lesson 04 passed\nnot a progress line\nlesson 42 started\nanswers 04 predicted 3\n"), missing};
  const view::ClassReport report = tally(course(), students, truth_04("3", "none"), true, "");
  CHECK(report.students == 1);
  CHECK(report.names == std::vector<std::string>{"ann", "eve"});
  REQUIRE(report.lessons.size() == 1);  // 42 is no lesson of this course
  CHECK(report.lessons[0].passed == 1);
  REQUIRE(report.problems.size() == 3);
  CHECK(report.problems[0].student == "ann");
  CHECK(report.problems[0].lines == std::vector<int>{2});
  CHECK(report.problems[0].counted);
  CHECK(report.problems[1].what.find("42") != std::string::npos);
  CHECK(report.problems[2].student == "eve");
  CHECK_FALSE(report.problems[2].counted);
}

TEST_CASE("students' trees are read by folder name: a missing folder or file is a problem, never an error", "[classroom]") {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("gpulab-class-test-" + std::to_string(getpid()));
  fs::create_directories(root / "one" / "alice");
  fs::create_directories(root / "two" / "alice");
  fs::create_directories(root / "bob");
  std::ofstream((root / "one" / "alice" / kProgressFile).string()) << "lesson 04 passed\n";
  std::ofstream((root / "two" / "alice" / kProgressFile).string()) << "lesson 04 started\n??\n";
  const auto students = read_students({(root / "one" / "alice").string() + "/", (root / "two" / "alice").string(),
                                       (root / "bob").string(), (root / "nobody").string()});
  fs::remove_all(root);
  REQUIRE(students.size() == 4);
  CHECK(students[0].name == "alice");
  CHECK(students[1].name == "alice-2");
  REQUIRE(students[0].progress);
  CHECK(students[0].progress->lessons.at("04").passed);
  REQUIRE(students[1].skipped.size() == 1);
  CHECK(students[1].skipped[0].number == 2);
  CHECK(students[2].name == "bob");
  CHECK_FALSE(students[2].progress);
  CHECK(students[2].problem.find("no progress file") != std::string::npos);
  CHECK(students[3].problem == "no such folder");
  CHECK(lessons_started(course(), students) == std::vector<std::string>{"04"});
}
