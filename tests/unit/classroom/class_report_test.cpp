// The class report's counting (src/classroom/class_report.h): tally() over parsed progress,
// read_students() over students' trees (hostile ones too: a named pipe, a 2 GiB file, a
// link), and read_grades() over what class grade writes.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

#include "classroom/class_report.h"
#include "grading/class_grade.h"

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
  tree.progress = parse_progress(progress_text, &tree.skipped);
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

namespace {

namespace fs = std::filesystem;

// A folder of its own under the temporary folder, removed at the end of the test.
struct Scratch {
  fs::path root;
  explicit Scratch(const std::string& name)
      : root(fs::temp_directory_path() / ("gpulab-" + name + "-" + std::to_string(getpid()))) {
    fs::remove_all(root);
    fs::create_directories(root);
  }
  ~Scratch() {
    std::error_code error;
    fs::remove_all(root, error);
  }
};

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path.string(), std::ios::binary) << text;
}

}  // namespace

TEST_CASE("a progress file that is not a regular file, or too large, is that student's problem, never read",
          "[classroom]") {
  Scratch scratch("hostile-files");
  const fs::path& root = scratch.root;
  write(root / "ann" / kProgressFile, "lesson 04 passed\n");
  fs::create_directories(root / "fifo");
  REQUIRE(mkfifo((root / "fifo" / kProgressFile).c_str(), 0600) == 0);  // opened, it would wait for a writer
  fs::create_directories(root / "huge");
  {
    std::ofstream((root / "huge" / kProgressFile).string());
    REQUIRE(truncate((root / "huge" / kProgressFile).c_str(), off_t{2} << 30) == 0);  // 2 GiB, sparse
  }
  write(root / "limit" / kProgressFile, std::string(kMaxProgressBytes, '#'));  // just at the cap: read
  write(root / "outside", "lesson 04 passed\n");
  fs::create_directories(root / "link");
  fs::create_symlink(root / "outside", root / "link" / kProgressFile);
  fs::create_directories(root / "folder" / kProgressFile);

  const auto students = read_students({(root / "ann").string(), (root / "fifo").string(), (root / "huge").string(),
                                       (root / "limit").string(), (root / "link").string(), (root / "folder").string()});
  REQUIRE(students.size() == 6);
  CHECK(students[0].progress);
  CHECK_FALSE(students[1].progress);
  CHECK(students[1].problem == "its progress file (.gpulab-progress) is a named pipe, not a regular file: not read");
  CHECK_FALSE(students[2].progress);
  CHECK(students[2].problem == "its progress file (.gpulab-progress) is 2.0 GiB, more than the 1.0 MiB read: not read");
  CHECK(students[3].progress);
  CHECK_FALSE(students[4].progress);
  CHECK(students[4].problem.find("a symbolic link") != std::string::npos);
  CHECK_FALSE(students[5].progress);
  CHECK(students[5].problem.find("a folder") != std::string::npos);

  const view::ClassReport report = tally(course(), students, {}, false, "");
  CHECK(report.students == 2);  // the rest of the class is reported
  REQUIRE(report.lessons.size() == 1);
  CHECK(report.lessons[0].passed == 1);
  CHECK(report.problems.size() == 4);
}

TEST_CASE("read_untrusted_file reads a regular file up to its cap, and no further", "[classroom]") {
  Scratch scratch("untrusted");
  write(scratch.root / "ten", "0123456789");
  CHECK(read_untrusted_file((scratch.root / "ten").string(), 10).text == std::optional<std::string>("0123456789"));
  const UntrustedFile over = read_untrusted_file((scratch.root / "ten").string(), 9);
  CHECK_FALSE(over.text);
  CHECK(over.problem == "is 10 bytes, more than the 9 bytes read: not read");
  const UntrustedFile missing = read_untrusted_file((scratch.root / "none").string(), 9);
  CHECK(missing.missing);
  CHECK_FALSE(read_untrusted_file("/dev/null", 9).text);  // a device
}

TEST_CASE("students are named safely and as class grade names them, whatever their folders are called",
          "[classroom]") {
  Scratch scratch("names");
  const fs::path& root = scratch.root;
  for (const std::string name : {"\x1b[31mred", "\xff\xfe", "class.json", "ok"}) write(root / name / kProgressFile, "lesson 04 started\n");
  const auto students = read_students({(root / "\x1b[31mred").string(), (root / "\xff\xfe").string(),
                                       (root / "class.json").string(), (root / "ok").string()});
  std::vector<std::string> names;
  for (const auto& student : students) names.push_back(student.name);
  CHECK(names == std::vector<std::string>{"__31mred", "__", "class.json-2", "ok"});
  for (const auto& student : students) CHECK(student.progress);
}

TEST_CASE("the report reads class grade's results as class grade writes them, and passed comes from there",
          "[classroom]") {
  Scratch scratch("grades");
  const fs::path& root = scratch.root;
  // What class grade writes, by its own functions: ann passed 04 and failed 05; ben failed
  // 04 though his progress file says passed; cat's box gave no result.
  auto graded = [](const std::string& name, const std::string& status, nlohmann::json lessons) {
    grading::StudentGrade grade;
    grade.name = name;
    grade.status = status;
    if (!lessons.is_null()) grade.grading = {{"lessons", lessons}, {"passed", 0}, {"failed", 0}};
    return grade;
  };
  const std::vector<grading::StudentGrade> grades = {
      graded("ann", "graded", {{{"id", "04"}, {"status", "passed"}}, {{"id", "05"}, {"status", "failed"}}}),
      graded("ben", "graded", {{{"id", "04"}, {"status", "failed"}}, {{"id", "05"}, {"status", "failed"}}}),
      graded("cat", "no_result", nullptr), graded("dan", "graded", {{{"id", "04"}, {"status", "passed"}}})};
  write(root / "out" / "class.json", grading::class_summary(grades, "rlimits").dump(2));
  for (const auto& grade : grades) write(root / "out" / grade.name / "grading.json", grading::student_grading_json(grade).dump(2));
  // dan's grading.json was changed after the summary: they disagree.
  write(root / "out" / "dan" / "grading.json",
        grading::student_grading_json(graded("dan", "graded", {{{"id", "04"}, {"status", "failed"}}})).dump());
  write(root / "ann" / kProgressFile, "lesson 04 started\nanswers 04 predicted 3\n");
  write(root / "ben" / kProgressFile, "lesson 04 passed\nanswers 04 predicted 5\n");
  write(root / "cat" / kProgressFile, "lesson 04 passed\n");
  write(root / "dan" / kProgressFile, "lesson 04 passed\n");
  write(root / "eve" / kProgressFile, "lesson 04 passed\n");  // not graded at all

  auto students = read_students({(root / "ann").string(), (root / "ben").string(), (root / "cat").string(),
                                 (root / "dan").string(), (root / "eve").string()});
  const GradesRead read = read_grades((root / "out").string(), students);
  CHECK(read.problem.empty());
  CHECK(read.not_given.empty());
  REQUIRE(students[0].grade);
  CHECK(students[0].grade->lessons.at("04") == "passed");
  REQUIRE(students[1].grade);
  CHECK_FALSE(students[2].grade);
  CHECK(students[2].grade_problem.find("no result") != std::string::npos);
  CHECK_FALSE(students[3].grade);
  CHECK(students[3].grade_problem.find("disagree") != std::string::npos);
  CHECK_FALSE(students[4].grade);
  CHECK(students[4].grade_problem.find("do not name this student") != std::string::npos);

  const view::ClassReport report = tally(course(), students, {}, false, "", &read);
  CHECK(report.passed_from_grades);
  REQUIRE(report.lessons.size() == 2);  // 05 too: graded, though nobody started it
  CHECK(report.lessons[0].graded == std::optional<int>(2));
  CHECK(report.lessons[0].passed == 1);  // ann, by grading; not ben, cat, dan or eve, who say so
  CHECK(report.lessons[0].started == 5);
  CHECK(report.lessons[1].id == "05");
  CHECK(report.lessons[1].passed == 0);
  CHECK(report.lessons[1].started == 0);
  CHECK(report.lessons[1].questions.empty());
  CHECK(report.problems.size() == 3);  // cat, dan, eve: no grade counted

  const view::ClassReport self = tally(course(), students, {}, false, "");
  CHECK_FALSE(self.passed_from_grades);
  CHECK(self.lessons.size() == 1);
  CHECK(self.lessons[0].passed == 4);  // self-reported
}

TEST_CASE("class grade's results are read defensively: a broken summary counts no grade", "[classroom]") {
  Scratch scratch("bad-grades");
  const fs::path& root = scratch.root;
  write(root / "ann" / kProgressFile, "lesson 04 passed\n");
  for (const std::string& summary : std::vector<std::string>{"", "{", "[]", "{\"students\": [{\"student\": 3}]}", std::string(40, '[') + std::string(40, ']'),
                                    "{\"students\": [{\"student\": \"ann\", \"status\": \"graded\", \"lessons\": {\"04\": \"forged\"}}]}"}) {
    write(root / "out" / "class.json", summary);
    auto students = read_students({(root / "ann").string()});
    const GradesRead read = read_grades((root / "out").string(), students);
    CHECK_FALSE(read.problem.empty());
    CHECK_FALSE(students[0].grade);
    const view::ClassReport report = tally(course(), students, {}, false, "", &read);
    REQUIRE(report.problems.size() == 1);
    CHECK(report.problems[0].student == "class.json");
    CHECK(report.lessons.at(0).passed == 0);
  }
  fs::remove(root / "out" / "class.json");
  REQUIRE(mkfifo((root / "out" / "class.json").c_str(), 0600) == 0);
  auto students = read_students({(root / "ann").string()});
  CHECK(read_grades((root / "out").string(), students).problem.find("named pipe") != std::string::npos);

  std::string why;
  CHECK_FALSE(parse_student_grading("{\"student\": \"bob\", \"status\": \"graded\", \"grading\": null}", "ann", why));
  CHECK(why == "it is another student's");
  CHECK(parse_student_grading("{\"student\": \"ann\", \"status\": \"no_result\", \"grading\": null}", "ann", why));
  CHECK_FALSE(parse_student_grading(
      "{\"student\": \"ann\", \"status\": \"graded\", \"grading\": {\"lessons\": [{\"id\": \"04\", \"status\": \"passed\"}, "
      "{\"id\": \"04\", \"status\": \"failed\"}]}}",
      "ann", why));  // one lesson twice
}
