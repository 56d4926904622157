// What `check all` writes: the grading as JSON, and as JUnit XML (Catch2's own reports,
// merged, plus one failing case for each lesson that gave none).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <pugixml.hpp>

#include "grading/grading.h"
#include "report/outcome.h"

namespace gpulab::grading {
namespace {

// "expected: X — observed: Y" → {X, Y}; any other text is all observation.
std::pair<nlohmann::json, nlohmann::json> split_failure(const std::string& text) {
  static const std::string expected = "expected: ";
  static const std::string observed = " — observed: ";
  const auto at = text.find(observed);
  if (text.rfind(expected, 0) == 0 && at != std::string::npos)
    return {text.substr(expected.size(), at - expected.size()), text.substr(at + observed.size())};
  return {nullptr, text};
}

}  // namespace

nlohmann::json grading_json(const Grading& grading) {
  nlohmann::json lessons = nlohmann::json::array();
  for (const auto& lesson : grading.lessons) {
    nlohmann::json checks = nlohmann::json::array();
    for (const auto& c : lesson.verdict.cases) {
      nlohmann::json check = {{"name", c.name}, {"ok", c.passed || c.skipped}, {"expected", nullptr}, {"observed", nullptr}};
      if (c.skipped) check["skipped"] = c.skip_reason;
      if (!c.failures.empty()) {
        const auto [expected, observed] = split_failure(c.failures.front().text);
        check["expected"] = expected;
        check["observed"] = observed;
        if (c.failures.size() > 1) {
          nlohmann::json more = nlohmann::json::array();
          for (std::size_t i = 1; i < c.failures.size(); ++i) {
            const auto [e, o] = split_failure(c.failures[i].text);
            more.push_back({{"expected", e}, {"observed", o}});
          }
          check["more"] = more;
        }
      }
      checks.push_back(check);
    }
    nlohmann::json entry = {{"id", lesson.id},
                            {"title", lesson.title},
                            {"status", lesson.status},
                            {"passed", lesson.verdict.passed()},
                            {"failed", lesson.verdict.failed()},
                            {"checks", checks},
                            {"placement", lesson.placement},
                            {"seconds", std::round(lesson.seconds * 10) / 10}};
    if (!lesson.message.empty()) entry["message"] = lesson.message;
    lessons.push_back(entry);
  }
  const std::size_t failed = grading.failed();
  return {{"root", grading.root},
          {"target", grading.target},
          {"lessons", lessons},
          {"passed", grading.lessons.size() - failed},
          {"failed", failed}};
}

std::string grading_junit(const Grading& grading) {
  pugi::xml_document document;
  auto declaration = document.append_child(pugi::node_declaration);
  declaration.append_attribute("version") = "1.0";
  declaration.append_attribute("encoding") = "UTF-8";
  auto suites = document.append_child("testsuites");
  suites.append_attribute("name") = fmt::format("gpulab check all: {} ({})", grading.root, grading.target).c_str();
  long tests = 0, failures = 0, errors = 0;
  for (const auto& lesson : grading.lessons) {
    pugi::xml_document part;
    bool copied = false;
    if (!lesson.junit_xml.empty() && part.load_string(lesson.junit_xml.c_str())) {
      for (const auto& suite : part.child("testsuites").children("testsuite")) {
        suites.append_copy(suite);
        tests += suite.attribute("tests").as_llong();
        failures += suite.attribute("failures").as_llong();
        errors += suite.attribute("errors").as_llong();
        copied = true;
      }
    }
    if (copied) continue;
    if (lesson.has_verdict) {
      // No JUnit run, but the checks' own report (a class's boxes save the second run): a
      // test case per check, from the verdict.
      const std::string name = "lesson" + lesson.id + "-checks";
      auto suite = suites.append_child("testsuite");
      suite.append_attribute("name") = name.c_str();
      suite.append_attribute("tests") = lesson.verdict.cases.size();
      suite.append_attribute("failures") = lesson.verdict.failed();
      suite.append_attribute("errors") = 0;
      suite.append_attribute("time") = fmt::format("{:.3f}", lesson.seconds).c_str();
      for (const auto& c : lesson.verdict.cases) {
        auto test_case = suite.append_child("testcase");
        test_case.append_attribute("classname") = name.c_str();
        test_case.append_attribute("name") = c.name.c_str();
        if (c.skipped) test_case.append_child("skipped").append_attribute("message") = c.skip_reason.c_str();
        for (const auto& failure : c.failures) {
          auto problem = test_case.append_child("failure");
          problem.append_attribute("message") = failure.text.c_str();
          problem.text().set(failure.text.c_str());
        }
      }
      tests += static_cast<long>(lesson.verdict.cases.size());
      failures += static_cast<long>(lesson.verdict.failed());
      continue;
    }
    // No report from Catch2 (not built, stopped, crashed, or --junit's second run broke):
    // one test case that says why.
    const std::string name = "lesson" + lesson.id + "-checks";
    const bool is_failure = lesson.status == "build_failed" || lesson.status == "failed" || lesson.status == "refused";
    auto suite = suites.append_child("testsuite");
    suite.append_attribute("name") = name.c_str();
    suite.append_attribute("tests") = 1;
    suite.append_attribute("failures") = is_failure ? 1 : 0;
    suite.append_attribute("errors") = is_failure ? 0 : 1;
    suite.append_attribute("skipped") = 0;
    suite.append_attribute("time") = fmt::format("{:.3f}", lesson.seconds).c_str();
    auto test_case = suite.append_child("testcase");
    test_case.append_attribute("classname") = name.c_str();
    test_case.append_attribute("name") = fmt::format("lesson {}: {}", lesson.id, lesson.title).c_str();
    test_case.append_attribute("time") = fmt::format("{:.3f}", lesson.seconds).c_str();
    auto problem = test_case.append_child(is_failure ? "failure" : "error");
    std::string first;
    std::getline(std::istringstream(lesson.message), first);
    problem.append_attribute("message") = (lesson.status + ": " + first).c_str();
    problem.append_attribute("type") = lesson.status.c_str();
    problem.text().set(lesson.message.c_str());
    tests += 1;
    (is_failure ? failures : errors) += 1;
  }
  suites.append_attribute("tests") = tests;
  suites.append_attribute("failures") = failures;
  suites.append_attribute("errors") = errors;
  std::ostringstream text;
  document.save(text, "  ");
  return text.str();
}

void write_grading_files(const GradeOptions& options, const Grading& grading) {
  const auto write = [](const std::string& path, const std::string& text) {
    if (path.empty()) return;
    std::ofstream file(path);
    file << text;
    if (!file) throw Failure(Outcome::kUsage, fmt::format("cannot write {}", path));
  };
  write(options.json, grading_json(grading).dump(2) + '\n');
  write(options.junit, grading_junit(grading));
}

}  // namespace gpulab::grading
