// What `check all` writes (grading/grading.h grading_json, grading_junit): the JSON with
// each check's expectation and observation apart and the counts over the lessons; the JUnit
// with Catch2's own suites merged, a suite from the verdict where there is no JUnit, and one
// failing (or erring) case for a lesson that gave no report.
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <pugixml.hpp>

#include "grading/grading.h"

using gpulab::CheckCase;
using gpulab::grading::Grading;
using gpulab::grading::grading_json;
using gpulab::grading::grading_junit;
using gpulab::grading::LessonGrade;

namespace {

CheckCase passing(const std::string& name) {
  CheckCase c;
  c.name = name;
  c.passed = true;
  return c;
}

CheckCase failing(const std::string& name, std::vector<std::string> texts) {
  CheckCase c;
  c.name = name;
  for (auto& text : texts) c.failures.push_back({std::move(text), {}});
  return c;
}

LessonGrade lesson(const std::string& id, const std::string& status) {
  LessonGrade grade;
  grade.id = id;
  grade.title = "lesson " + id + "'s title";
  grade.status = status;
  return grade;
}

pugi::xml_document parsed(const std::string& xml) {
  pugi::xml_document document;
  REQUIRE(document.load_string(xml.c_str()));
  return document;
}

pugi::xml_node suite_named(const pugi::xml_document& document, const std::string& name) {
  return document.child("testsuites").find_child_by_attribute("testsuite", "name", name.c_str());
}

}  // namespace

TEST_CASE("grading JSON: each check's expectation and observation apart, the counts over the lessons",
          "[unit][grading]") {
  Grading grading;
  grading.root = "/trees/alice";
  grading.target = "exercise";
  LessonGrade four = lesson("04", "failed");
  four.has_verdict = true;
  four.verdict.cases = {passing("nothing on GPU 0"),
                        failing("the work lands on GPU 3", {"expected: GPU 3 — observed: cpu", "expected: 1 — observed: 2"}),
                        failing("no warnings", {"a warning was printed"})};
  CheckCase skipped;
  skipped.name = "eight GPUs";
  skipped.skipped = true;
  skipped.skip_reason = "needs 8 GPUs";
  four.verdict.cases.push_back(skipped);
  four.seconds = 1.26;
  four.placement = {{"observation", "after forward"}};
  LessonGrade one = lesson("01", "passed");
  LessonGrade two = lesson("02", "build_failed");
  two.message = "main.cpp:3: error: expected ';'\n";
  grading.lessons = {one, two, four};

  const nlohmann::json json = grading_json(grading);
  CHECK(json.at("root") == "/trees/alice");
  CHECK(json.at("target") == "exercise");
  CHECK(json.at("passed") == 1);
  CHECK(json.at("failed") == 2);
  const auto& lessons = json.at("lessons");
  REQUIRE(lessons.size() == 3);
  CHECK(lessons[0].at("id") == "01");
  CHECK_FALSE(lessons[0].contains("message"));  // only a lesson with one says why
  CHECK(lessons[1].at("status") == "build_failed");
  CHECK(lessons[1].at("message") == "main.cpp:3: error: expected ';'\n");
  const auto& checks = lessons[2].at("checks");
  CHECK(lessons[2].at("passed") == 1);
  CHECK(lessons[2].at("failed") == 2);
  CHECK(lessons[2].at("seconds") == Approx(1.3));  // to a tenth
  CHECK(lessons[2].at("placement").at("observation") == "after forward");
  REQUIRE(checks.size() == 4);
  CHECK(checks[0] == nlohmann::json{{"name", "nothing on GPU 0"}, {"ok", true}, {"expected", nullptr}, {"observed", nullptr}});
  CHECK(checks[1].at("ok") == false);
  CHECK(checks[1].at("expected") == "GPU 3");
  CHECK(checks[1].at("observed") == "cpu");
  CHECK(checks[1].at("more") == nlohmann::json::array({{{"expected", "1"}, {"observed", "2"}}}));
  // A failure that is not "expected: … — observed: …" is all observation.
  CHECK(checks[2].at("expected").is_null());
  CHECK(checks[2].at("observed") == "a warning was printed");
  CHECK_FALSE(checks[2].contains("more"));
  // A skipped check is ok, and says why it was skipped.
  CHECK(checks[3].at("ok") == true);
  CHECK(checks[3].at("skipped") == "needs 8 GPUs");
}

TEST_CASE("grading JUnit: Catch2's own suites are merged and their counts summed", "[unit][grading]") {
  Grading grading;
  grading.root = "/trees/alice";
  grading.target = "solution";
  LessonGrade one = lesson("01", "passed");
  one.junit_xml = R"(<?xml version="1.0"?><testsuites><testsuite name="lesson01-checks" tests="3" failures="0" errors="0">
    <testcase name="a"/><testcase name="b"/><testcase name="c"/></testsuite></testsuites>)";
  LessonGrade four = lesson("04", "failed");
  four.junit_xml = R"(<testsuites><testsuite name="lesson04-checks" tests="2" failures="1" errors="1">
    <testcase name="a"><failure message="x"/></testcase><testcase name="b"><error message="y"/></testcase></testsuite></testsuites>)";
  grading.lessons = {one, four};
  const auto document = parsed(grading_junit(grading));
  const auto suites = document.child("testsuites");
  CHECK(std::string(suites.attribute("name").value()) == "gpulab check all: /trees/alice (solution)");
  CHECK(suites.attribute("tests").as_int() == 5);
  CHECK(suites.attribute("failures").as_int() == 1);
  CHECK(suites.attribute("errors").as_int() == 1);
  REQUIRE(suite_named(document, "lesson01-checks"));
  CHECK(std::distance(suite_named(document, "lesson01-checks").children("testcase").begin(),
                      suite_named(document, "lesson01-checks").children("testcase").end()) == 3);
  CHECK(suite_named(document, "lesson04-checks").child("testcase").child("failure"));
}

TEST_CASE("grading JUnit: without Catch2's JUnit, a suite from the verdict, a case per check", "[unit][grading]") {
  Grading grading;
  LessonGrade four = lesson("04", "failed");
  four.has_verdict = true;
  four.junit_xml = "not XML <";  // what a broken second run left: the verdict is used instead
  CheckCase skipped;
  skipped.name = "eight GPUs";
  skipped.skipped = true;
  skipped.skip_reason = "needs 8 GPUs";
  four.verdict.cases = {passing("nothing on GPU 0"), failing("on GPU 3", {"expected: GPU 3 — observed: cpu"}), skipped};
  grading.lessons = {four};
  const auto document = parsed(grading_junit(grading));
  const auto suite = suite_named(document, "lesson04-checks");
  REQUIRE(suite);
  CHECK(suite.attribute("tests").as_int() == 3);
  CHECK(suite.attribute("failures").as_int() == 1);
  CHECK(suite.attribute("errors").as_int() == 0);
  const auto failed = suite.find_child_by_attribute("testcase", "name", "on GPU 3");
  REQUIRE(failed);
  CHECK(std::string(failed.child("failure").attribute("message").value()) == "expected: GPU 3 — observed: cpu");
  CHECK(std::string(failed.child("failure").text().get()) == "expected: GPU 3 — observed: cpu");
  CHECK(std::string(suite.find_child_by_attribute("testcase", "name", "eight GPUs").child("skipped").attribute("message").value()) ==
        "needs 8 GPUs");
  CHECK_FALSE(suite.find_child_by_attribute("testcase", "name", "nothing on GPU 0").first_child());
  CHECK(document.child("testsuites").attribute("tests").as_int() == 3);
  CHECK(document.child("testsuites").attribute("failures").as_int() == 1);
}

TEST_CASE("grading JUnit: a lesson with no report is one case, a failure when it is the student's, else an error",
          "[unit][grading]") {
  Grading grading;
  LessonGrade two = lesson("02", "build_failed");
  two.message = "main.cpp:3: error: expected ';'\nmore\n";
  LessonGrade three = lesson("03", "refused");
  three.message = "lessons/03/data is a link\n";
  LessonGrade five = lesson("05", "timed_out");
  five.message = "the checks did not finish within 60 s\n";
  LessonGrade six = lesson("06", "crashed");
  grading.lessons = {two, three, five, six};
  const auto document = parsed(grading_junit(grading));
  const auto suites = document.child("testsuites");
  CHECK(suites.attribute("tests").as_int() == 4);
  CHECK(suites.attribute("failures").as_int() == 2);
  CHECK(suites.attribute("errors").as_int() == 2);
  const auto build = suite_named(document, "lesson02-checks").child("testcase");
  CHECK(std::string(build.attribute("name").value()) == "lesson 02: lesson 02's title");
  const auto problem = build.child("failure");
  REQUIRE(problem);
  CHECK(std::string(problem.attribute("message").value()) == "build_failed: main.cpp:3: error: expected ';'");  // the first line
  CHECK(std::string(problem.attribute("type").value()) == "build_failed");
  CHECK(std::string(problem.text().get()) == two.message);  // all of it
  CHECK(suite_named(document, "lesson03-checks").child("testcase").child("failure"));
  const auto hung = suite_named(document, "lesson05-checks");
  CHECK(hung.child("testcase").child("error"));
  CHECK(hung.attribute("errors").as_int() == 1);
  CHECK(hung.attribute("failures").as_int() == 0);
  CHECK(suite_named(document, "lesson06-checks").child("testcase").child("error"));
}
