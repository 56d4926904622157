// The checks' verdict, read from Catch2's XML report: which checks passed, failed or were
// skipped, each failure's text and context, paths stripped; anything else is refused.
#include <catch2/catch.hpp>

#include "report/program_ends.h"
#include "report/verdict.h"

using namespace gpulab;

namespace {

// As Catch2 2.13's XML reporter writes a run of two checks, one failing with an INFO.
const char* const kReport = R"(<?xml version="1.0" encoding="UTF-8"?>
<Catch name="lesson04-checks">
  <Group name="lesson04-checks">
    <TestCase name="the work lands on physical GPU 3 only" filename="/src/tests/lessons/lesson04_checks.cpp" line="20">
      <Info>
        scenario: CUDA_VISIBLE_DEVICES=2,3,4,5 /build/bin/lesson-04 --gpu 3
      </Info>
      <Failure filename="/src/tests/lessons/lesson04_checks.cpp" line="31">
        expected: weight on physical GPU 3 — observed: weight on cpu
      </Failure>
      <OverallResult success="false"/>
    </TestCase>
    <TestCase name="nothing on GPU 0" filename="/src/tests/lessons/lesson04_checks.cpp" line="40">
      <OverallResult success="true"/>
    </TestCase>
    <OverallResults successes="1" failures="1" expectedFailures="0"/>
  </Group>
  <OverallResults successes="1" failures="1" expectedFailures="0"/>
</Catch>
)";

}  // namespace

TEST_CASE("a Catch2 report becomes one case per check, failures with their context") {
  const CheckVerdict verdict = parse_check_xml(kReport, {"/build/bin/"});
  REQUIRE(verdict.cases.size() == 2);
  CHECK(verdict.failed() == 1);
  CHECK(verdict.passed() == 1);
  const CheckCase& first = verdict.cases[0];
  CHECK(first.name == "the work lands on physical GPU 3 only");
  CHECK_FALSE(first.passed);
  REQUIRE(first.failures.size() == 1);
  CHECK_THAT(first.failures[0].text, Catch::Contains("observed: weight on cpu"));
  REQUIRE_FALSE(first.failures[0].context.empty());
  CHECK_THAT(first.failures[0].context[0], Catch::Contains("lesson-04 --gpu 3"));
  CHECK_THAT(first.failures[0].context[0], !Catch::Contains("/build/bin/"));
  CHECK(verdict.cases[1].passed);
}

TEST_CASE("output that is not Catch2's XML report is refused") {
  CHECK_THROWS(parse_check_xml(""));
  CHECK_THROWS(parse_check_xml("Segmentation fault"));
  CHECK_THROWS(parse_check_xml("<html><body/></html>"));
}

TEST_CASE("the checks' note of crashed and hung programs reads back, a crash outranking a hang") {
  const std::string text = program_end_line({"lesson-04", "did not finish within 60 s"}) +
                           program_end_line({"lesson-04", "crashed with SIGSEGV (signal 11)"});
  const auto ends = parse_program_ends(text);
  REQUIRE(ends.size() == 2);
  CHECK(ends[0].program == "lesson-04");
  CHECK(ends[0].how == "did not finish within 60 s");
  CHECK(outcome_of(ends) == Outcome::kCrashed);
  CHECK(outcome_of({ends[0]}) == Outcome::kTimedOut);
  CHECK(outcome_of({}) == Outcome::kChecksFailed);
}
