// Grading a class (grading/class_grade_internal.h): what a student's box is given of the
// build (which files are bound, which programs are the references), how the box's result
// becomes the student's grade (limits hit, no result and why), and how grade-in-box hands
// its result over on its descriptor.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <pugixml.hpp>

#include "grading/class_grade_internal.h"
#include "proc/temp_dir.h"
#include "proc/text_file.h"
#include "report/outcome.h"

namespace fs = std::filesystem;
using gpulab::ProcessResult;
using gpulab::read_text_file;
using gpulab::TempDir;
using gpulab::grading::BoxResult;
using gpulab::grading::StudentGrade;

namespace {

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// A build folder: its cache, bin/ with the grader's programs and the lesson programs.
void make_build(const TempDir& build, const std::string& libtorch) {
  write(build.path() + "/CMakeCache.txt", "LIBTORCH_PREFIX:PATH=" + libtorch + "\n");
  fs::create_directories(build.path() + "/bin/lesson-work");  // a folder: never bound
  fs::create_directories(build.path() + "/src");
  for (const char* name : {"gpulab", "lesson01-checks", "lesson04-checks", "lesson-01", "solution-01", "solution-02",
                           "solution-04", "mutant-01-uses-cuda-0", "variant-01-reads-the-list", "lesson02-checks", "sim-probe"})
    write(build.path() + "/bin/" + name, "program");
}

// grade-in-box's document for lessons 01 (passed) and 04 (failed).
std::string box_document(bool disk_full) {
  gpulab::grading::Grading grading;
  grading.root = "/student";
  grading.target = "exercise";
  gpulab::grading::LessonGrade one;
  one.id = "01";
  one.status = "passed";
  gpulab::grading::LessonGrade four;
  four.id = "04";
  four.status = "failed";
  four.message = "the checks exited with code 1\n";
  grading.lessons = {one, four};
  return gpulab::grading::box_result_document(grading, disk_full);
}

BoxResult box_ended(int exit_code, const std::string& err = "", std::vector<std::string> limits = {}) {
  BoxResult box;
  box.process = ProcessResult{exit_code, 0, false, "", err};
  box.limits_hit = std::move(limits);
  return box;
}

const std::vector<std::string> kIds = {"01", "04"};

}  // namespace

TEST_CASE("a box binds the API, the library, LibTorch, the lessons, the nodes and the recipes, read-only",
          "[unit][grading][class]") {
  const TempDir build("class-grade");
  make_build(build, "/opt/libtorch");
  const auto layout = gpulab::grading::box_layout("/repo", build.path(), "/scratch/recipes.json", {"01", "04"});
  CHECK(layout.read_only == std::vector<std::string>{"/repo/include", "/repo/src", "/repo/nodes", "/repo/lessons",
                                                     build.path() + "/src", "/opt/libtorch", "/scratch/recipes.json"});
  CHECK(layout.bin == build.path() + "/bin");
  CHECK(layout.env == std::vector<std::pair<std::string, std::string>>{{"GPULAB_STATE_DIR", "/tmp/state"}});
  CHECK(layout.student.empty());  // each student's own, later
}

TEST_CASE("a box's programs are the CLI and the graded lessons' checks; their solutions are references; no other program",
          "[unit][grading][class]") {
  const TempDir build("class-grade");
  make_build(build, "/opt/libtorch");
  const std::string bin = build.path() + "/bin/";
  const auto layout = gpulab::grading::box_layout("/repo", build.path(), "/r.json", {"01", "04"});
  CHECK(layout.programs == std::vector<std::string>{bin + "gpulab", bin + "lesson01-checks", bin + "lesson04-checks"});
  CHECK(layout.references == std::vector<std::string>{bin + "solution-01", bin + "solution-04"});  // not lesson 02's
  const auto one = gpulab::grading::box_layout("/repo", build.path(), "/r.json", {"01"});
  CHECK(one.references == std::vector<std::string>{bin + "solution-01"});
}

TEST_CASE("LibTorch under /usr/ is the system's, already in the box; a build's own LibTorch headers are bound",
          "[unit][grading][class]") {
  const TempDir build("class-grade");
  make_build(build, "/usr/lib/libtorch");
  fs::create_directories(build.path() + "/libtorch-include");
  const auto layout = gpulab::grading::box_layout("/repo", build.path(), "/r.json", {});
  CHECK(layout.read_only == std::vector<std::string>{"/repo/include", "/repo/src", "/repo/nodes", "/repo/lessons",
                                                     build.path() + "/src", build.path() + "/libtorch-include", "/r.json"});
  CHECK(layout.references.empty());
}

TEST_CASE("a box's document is the student's grade; grade-in-box's own document reads back whole", "[unit][grading][class]") {
  StudentGrade student;
  gpulab::grading::read_result(student, box_ended(0), "building lesson 01\n" + box_document(false), 900, kIds);
  CHECK(student.status == "graded");
  CHECK(student.message.empty());
  CHECK(student.limits_hit.empty());
  CHECK(student.grading.at("passed") == 1);
  CHECK(student.grading.at("failed") == 1);
  CHECK(student.grading.at("lessons")[1].at("message") == "the checks exited with code 1\n");
  pugi::xml_document junit;
  REQUIRE(junit.load_string(student.junit.c_str()));
  CHECK(junit.child("testsuites").attribute("tests").as_int() == 2);
}

TEST_CASE("a limit hit is the student's status, with the result kept; a full disk is one", "[unit][grading][class]") {
  StudentGrade limited;
  gpulab::grading::read_result(limited, box_ended(0, "", {"time", "memory"}), box_document(false), 900, kIds);
  CHECK(limited.status == "over_limit");
  CHECK(limited.message == "stopped at the box's limit: time, memory");
  CHECK(limited.grading.at("passed") == 1);  // what was graded is kept
  StudentGrade full;
  gpulab::grading::read_result(full, box_ended(0), box_document(true), 900, kIds);
  CHECK(full.status == "over_limit");
  CHECK(full.limits_hit == std::vector<std::string>{"disk"});
  CHECK(full.message == "stopped at the box's limit: disk");
}

TEST_CASE("a box without a result says how it ended and what it said last", "[unit][grading][class]") {
  StudentGrade student;
  gpulab::grading::read_result(student, box_ended(1, "bwrap: starting\n\ncannot make /tmp\n\n"), "not a document\n", 900, kIds);
  CHECK(student.status == "no_result");
  CHECK(student.grading.is_null());
  CHECK(student.message == "the box exited with code 1 without a result: cannot make /tmp");
  // Stopped at its time limit: both.
  BoxResult stopped = box_ended(-1, "", {"time"});
  stopped.process.signal = 9;
  stopped.process.timed_out = true;
  StudentGrade slow;
  gpulab::grading::read_result(slow, stopped, "", 60, kIds);
  CHECK(slow.status == "over_limit");
  CHECK(slow.message == "stopped at the box's limit: time; the box did not finish within 60 s and was stopped without a result");
  // A result for other lessons than those asked is none.
  StudentGrade other;
  gpulab::grading::read_result(other, box_ended(0), box_document(false), 900, {"01"});
  CHECK(other.status == "no_result");
}

TEST_CASE("a student without a result gets a JUnit document with one error that says why", "[unit][grading][class]") {
  pugi::xml_document document;
  REQUIRE(document.load_string(gpulab::grading::junit_error("alice", "no_result: the box exited with code 1").c_str()));
  const auto suite = document.child("testsuites").child("testsuite");
  CHECK(std::string(suite.attribute("name").value()) == "alice");
  CHECK(suite.attribute("tests").as_int() == 1);
  CHECK(suite.attribute("errors").as_int() == 1);
  CHECK(std::string(suite.child("testcase").attribute("name").value()) == "grading");
  CHECK(std::string(suite.child("testcase").child("error").attribute("message").value()) ==
        "no_result: the box exited with code 1");
}

TEST_CASE("the student's line: name, status, score, seconds, then the first line of why", "[unit][grading][class]") {
  StudentGrade student;
  student.name = "alice";
  student.status = "over_limit";
  student.grading = {{"passed", 3}, {"failed", 2}};
  student.seconds = 41.6;
  student.message = "stopped at the box's limit: time\nmore";
  CHECK(gpulab::grading::student_line(student) ==
        "alice                over_limit  3 of 5 lessons passed       42 s\n    stopped at the box's limit: time\n");
  StudentGrade lost;
  lost.name = "bob";
  lost.status = "not_a_tree";
  CHECK(gpulab::grading::student_line(lost) == "bob                  not_a_tree  -                            0 s\n");
}

TEST_CASE("a box's result file is read up to the limit", "[unit][grading][class]") {
  const TempDir dir("class-grade");
  write(dir.path() + "/result", "0123456789");
  CHECK(gpulab::grading::read_bounded(dir.path() + "/result", 4) == "0123");
  CHECK(gpulab::grading::read_bounded(dir.path() + "/result", 100) == "0123456789");
  CHECK(gpulab::grading::read_bounded(dir.path() + "/missing", 100).empty());
}

TEST_CASE("grade-in-box writes all of its result on the descriptor, or says it cannot", "[unit][grading][class]") {
  const TempDir dir("class-grade");
  const std::string path = dir.path() + "/result";
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  REQUIRE(fd >= 0);
  const std::string document = box_document(false) + std::string(3u << 20, 'x');  // more than one write takes
  gpulab::grading::write_result(fd, document);
  close(fd);
  CHECK(read_text_file(path) == document);
  const int read_only = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(read_only >= 0);
  CHECK_THROWS_AS(gpulab::grading::write_result(read_only, "x"), std::runtime_error);
  close(read_only);
}

TEST_CASE("grade-in-box refuses a result descriptor that is not open, before grading anything", "[unit][grading][class]") {
  std::ostringstream progress;
  try {
    gpulab::grading::grade_in_box(gpulab::Manifest{}, {}, -1, progress);
    FAIL("graded without a result descriptor");
  } catch (const gpulab::Failure& failure) {
    CHECK(failure.outcome == gpulab::Outcome::kUsage);
    CHECK(std::string(failure.what()) == "--result-fd is not an open descriptor");
  }
  CHECK(progress.str().empty());
}

TEST_CASE("a place is nearly full below the room asked for; a place that cannot be asked about is not", "[unit][grading][class]") {
  const TempDir dir("class-grade");
  CHECK_FALSE(gpulab::grading::nearly_full({dir.path()}, 0));
  CHECK(gpulab::grading::nearly_full({dir.path()}, std::numeric_limits<std::uint64_t>::max()));
  CHECK(gpulab::grading::nearly_full({dir.path() + "/missing", dir.path()}, std::numeric_limits<std::uint64_t>::max()));
  CHECK_FALSE(gpulab::grading::nearly_full({dir.path() + "/missing"}, std::numeric_limits<std::uint64_t>::max()));
}
