// What the grader reads back from a box (grading/class_grade.h parse_box_result): grade-in-box's
// one document, or nothing. Whatever is not exactly that, for exactly the lessons asked, is
// "not graded", never a pass; the counts are the grader's own, not the document's.
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "grading/class_grade.h"

using gpulab::grading::parse_box_result;

namespace {

std::string document(const nlohmann::json& lessons, const nlohmann::json& extra = nlohmann::json::object()) {
  nlohmann::json doc = {{"grading", {{"lessons", lessons}}}, {"junit", "<testsuites/>"}, {"disk_full", false}};
  doc["grading"].update(extra);
  return doc.dump() + "\n";
}

const std::vector<std::string> kAsked = {"01", "04"};

}  // namespace

TEST_CASE("a box's document for the lessons asked is read, its counts recomputed", "[unit][grading]") {
  // The document claims 20 passes; the grader counts one.
  const auto read = parse_box_result(
      document({{{"id", "01"}, {"status", "passed"}}, {{"id", "04"}, {"status", "failed"}}}, {{"passed", 20}, {"failed", 0}}),
      kAsked);
  REQUIRE(read);
  CHECK(read->grading.at("passed") == 1);
  CHECK(read->grading.at("failed") == 1);
  CHECK(read->junit == "<testsuites/>");
  CHECK_FALSE(read->disk_full);
}

TEST_CASE("a box's document that is not exactly the lessons asked is no result", "[unit][grading]") {
  const nlohmann::json passed01 = {{"id", "01"}, {"status", "passed"}};
  const nlohmann::json passed04 = {{"id", "04"}, {"status", "passed"}};
  const std::string missing = document({passed01});
  const std::string twice = document({passed01, passed01, passed04});
  const std::string extra = document({passed01, passed04, {{"id", "05"}, {"status", "passed"}}});
  const std::string unknown_status = document({passed01, {{"id", "04"}, {"status", "excellent"}}});
  const std::string id_not_text = document({passed01, {{"id", 4}, {"status", "passed"}}});
  for (const std::string& text : {missing, twice, extra, unknown_status, id_not_text}) {
    INFO(text);
    CHECK_FALSE(parse_box_result(text, kAsked));
  }
}

TEST_CASE("anything but one JSON document on the last line is no result", "[unit][grading]") {
  const std::string good = document({{{"id", "01"}, {"status", "passed"}}, {{"id", "04"}, {"status", "passed"}}});
  CHECK(parse_box_result(good, kAsked));
  CHECK(parse_box_result("lesson 01 passed\n" + good + "\n\n", kAsked));  // progress before it, blank lines after
  for (const std::string& text : {std::string(), std::string("\n\n"), good + "garbage\n", good.substr(0, good.size() / 2),
                                  std::string("{\"grading\":{\"lessons\":[]},\"junit\":1,\"disk_full\":false}\n"),
                                  std::string("{\"grading\":[],\"junit\":\"\",\"disk_full\":false}\n"),
                                  std::string("[1,2,3]\n")}) {
    INFO(text);
    CHECK_FALSE(parse_box_result(text, kAsked));
  }
}

TEST_CASE("the class summary counts each lesson's passes among the students graded, and no one without a result",
          "[unit][grading]") {
  using gpulab::grading::StudentGrade;
  auto graded = [](const std::string& name, const std::string& l01, const std::string& l04) {
    StudentGrade student;
    student.name = name;
    student.status = "graded";
    student.grading = {{"lessons", {{{"id", "01"}, {"status", l01}}, {{"id", "04"}, {"status", l04}}}},
                       {"passed", int(l01 == "passed") + int(l04 == "passed")}};
    return student;
  };
  StudentGrade lost;
  lost.name = "lost";
  lost.status = "no_result";
  const auto summary =
      gpulab::grading::class_summary({graded("alice", "passed", "failed"), graded("bob", "passed", "passed"), lost}, "cgroup v2");
  CHECK(summary.at("lessons").at("01") == nlohmann::json({{"passed", 2}, {"graded", 2}}));
  CHECK(summary.at("lessons").at("04") == nlohmann::json({{"passed", 1}, {"graded", 2}}));
  CHECK(summary.at("box") == "cgroup v2");
  const auto& students = summary.at("students");
  REQUIRE(students.size() == 3);
  CHECK(students[2].at("student") == "lost");
  CHECK(students[2].at("passed") == 0);
  CHECK(students[2].at("lessons").empty());
  CHECK(students[1].at("lessons").at("04") == "passed");
}
