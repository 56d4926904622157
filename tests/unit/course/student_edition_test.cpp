// The student edition's class file (student-edition.conf): its reader, the hint caps it
// sets, and the README an export writes (docs/student-edition.md).
#include <catch2/catch.hpp>

#include "course/student_edition.h"

using gpulab::ClassFileError;
using gpulab::ClassSettings;
using gpulab::HintLimit;
using gpulab::parse_class_file;

namespace {
// The message parse_class_file throws for `text`, "" when it reads it.
std::string error_of(const std::string& text) {
  try {
    parse_class_file(text, "student-edition.conf");
  } catch (const ClassFileError& e) {
    return e.what();
  }
  return "";
}

gpulab::Manifest three_lessons() {
  gpulab::Manifest manifest;
  for (const char* id : {"01", "02", "04"}) {
    gpulab::LessonEntry lesson;
    lesson.id = id;
    manifest.lessons.push_back(lesson);
  }
  return manifest;
}
}  // namespace

TEST_CASE("a hint cap allows all, all but the last, none or a number of a lesson's hints", "[student-edition]") {
  CHECK(HintLimit{HintLimit::Kind::kAll, 0}.allowed(3) == 3);
  CHECK(HintLimit{HintLimit::Kind::kAllButLast, 0}.allowed(3) == 2);
  CHECK(HintLimit{HintLimit::Kind::kAllButLast, 0}.allowed(1) == 0);
  CHECK(HintLimit{HintLimit::Kind::kAllButLast, 0}.allowed(0) == 0);
  CHECK(HintLimit{HintLimit::Kind::kNumber, 2}.allowed(3) == 2);
  CHECK(HintLimit{HintLimit::Kind::kNumber, 5}.allowed(3) == 3);  // never more than the lesson has
  CHECK(HintLimit{HintLimit::Kind::kNumber, 0}.allowed(3) == 0);
}

TEST_CASE("the class file caps every lesson's hints, and a lesson's own line wins", "[student-edition]") {
  ClassSettings settings = parse_class_file(
      "# a class\n\nedition = student\nhints = all-but-last   # most lessons\nhints.4 = 1\r\nhints.02=none\n", "c.conf");
  gpulab::resolve_lessons(settings, three_lessons());
  CHECK(settings.hints_allowed("01", 3) == 2);
  CHECK(settings.hints_allowed("02", 3) == 0);
  CHECK(settings.hints_allowed("04", 3) == 1);  // written hints.4: lesson 04
  CHECK(settings.lesson_lines.at("04") == 5);

  const ClassSettings none = parse_class_file("edition = student\n", "c.conf");
  CHECK(none.hints_allowed("01", 3) == 3);  // no cap: every hint
  CHECK(parse_class_file(gpulab::class_file_text(), "c.conf").hints_allowed("01", 3) == 3);
}

TEST_CASE("a bad class file is an error naming its file and line", "[student-edition]") {
  CHECK(error_of("edition = student\nhints = most\n") ==
        "student-edition.conf:2: a hint cap is all, all-but-last, none or a number of hints (0 to 999), got 'most'");
  CHECK(error_of("\n\nhints -1\n") == "student-edition.conf:3: expected a setting such as hints = all-but-last, got 'hints -1'");
  CHECK(error_of("hints = -1\n") ==
        "student-edition.conf:1: a hint cap is all, all-but-last, none or a number of hints (0 to 999), got '-1'");
  CHECK(error_of("hints = 99999999999999999999\n").rfind("student-edition.conf:1: a hint cap is", 0) == 0);
  CHECK(error_of("edition = teacher\n") ==
        "student-edition.conf:1: edition must be student (this file marks the student edition), got 'teacher'");
  CHECK(error_of("hints = 1\nhints = 2\n") == "student-edition.conf:2: 'hints' is set twice (first on line 1)");
  CHECK(error_of("hints.x4 = 1\n") == "student-edition.conf:1: hints.NN takes a lesson number, e.g. hints.04, got 'hints.x4'");
  CHECK(error_of("solutions = yes\n") ==
        "student-edition.conf:1: unknown setting 'solutions'; the settings are edition, hints and hints.NN");
  CHECK(error_of(std::string("hints = \x01\xff", 10)).find("got '?" "?'") != std::string::npos);
  CHECK(error_of("# only comments\n   \n").empty());
}

TEST_CASE("a lesson cap names a lesson of the manifest, once", "[student-edition]") {
  ClassSettings unknown = parse_class_file("hints = 2\nhints.42 = 1\n", "c.conf");
  CHECK_THROWS_WITH(gpulab::resolve_lessons(unknown, three_lessons()), "c.conf:2: hints.42 names no lesson; the lessons are 01 to 04");
  ClassSettings twice = parse_class_file("hints.4 = 1\nhints.04 = 2\n", "c.conf");
  CHECK_THROWS_WITH(gpulab::resolve_lessons(twice, three_lessons()),
                    "c.conf:2: lesson 04's hints are capped twice (first on line 1)");
}

TEST_CASE("the edition's README names no --solution", "[student-edition]") {
  const std::string readme =
      "# gpulab\n\n```sh\n./gpulab hint 04 2\n./gpulab run 04 --solution    # the reference solution\n```\n"
      "| `./gpulab run NN [--solution] [--json]` | runs |\n"
      "(`tests/cli/learner_path_test.cpp`): `run NN`, `--solution`, `--json`\n";
  const std::string student = gpulab::student_readme(readme);
  CHECK(student.find("--solution") == std::string::npos);
  CHECK(student.find("Student edition") != std::string::npos);
  CHECK(student.find("./gpulab hint 04 2\n```\n") != std::string::npos);  // the other lines as they were
  CHECK(student.find("| `./gpulab run NN [--json]` | runs |\n") != std::string::npos);
  CHECK(student.find("`run NN`, `--json`") != std::string::npos);
}
