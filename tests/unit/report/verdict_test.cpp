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

// The same run as Catch2 3 (3.7.1, Ubuntu 24.04 has 3.4) writes it: no <Group>, a new root,
// source positions on <Info>, a skip count, the cases' totals; and a WARN, a skipped check.
const char* const kReport3 = R"(<?xml version="1.0" encoding="UTF-8"?>
<Catch2TestRun name="lesson04-checks" rng-seed="146298864" xml-format-version="3" catch2-version="3.7.1" filters="~[stretch]">
  <TestCase name="the work lands on physical GPU 3 only" tags="[lesson04]" filename="/src/tests/lessons/lesson04_checks.cpp" line="20">
    <Info filename="/src/tests/lessons/lesson04_checks.cpp" line="39">
      scenario: CUDA_VISIBLE_DEVICES=2,3,4,5 /build/bin/lesson-04 --gpu 3
    </Info>
    <Failure filename="/src/tests/support/expect.cpp" line="16">
      expected: weight on physical GPU 3 — observed: weight on cpu
    </Failure>
    <OverallResult success="false" skips="0"/>
  </TestCase>
  <TestCase name="nothing on GPU 0" tags="[lesson04]" filename="/src/tests/lessons/lesson04_checks.cpp" line="40">
    <OverallResult success="true" skips="0"/>
  </TestCase>
  <TestCase name="eight real GPUs" tags="[lesson04]" filename="/src/tests/lessons/lesson04_checks.cpp" line="60">
    <Warning filename="/src/tests/support/gpu_requirements.cpp" line="30">
      needs 8 GPUs, this machine has 2
    </Warning>
    <OverallResult success="true" skips="0"/>
  </TestCase>
  <OverallResults successes="1" failures="1" expectedFailures="0" skips="0"/>
  <OverallResultsCases successes="2" failures="1" expectedFailures="0" skips="0"/>
</Catch2TestRun>
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

TEST_CASE("Catch2 3's report reads as Catch2 2's") {
  const CheckVerdict verdict = parse_check_xml(kReport3, {"/build/bin/"});
  REQUIRE(verdict.cases.size() == 3);
  CHECK(verdict.failed() == 1);
  CHECK(verdict.passed() == 2);
  const CheckCase& first = verdict.cases[0];
  CHECK(first.name == "the work lands on physical GPU 3 only");
  CHECK_FALSE(first.passed);
  REQUIRE(first.failures.size() == 1);
  CHECK(first.failures[0].text == "expected: weight on physical GPU 3 — observed: weight on cpu");
  REQUIRE(first.failures[0].context.size() == 1);
  CHECK(first.failures[0].context[0] == "scenario: CUDA_VISIBLE_DEVICES=2,3,4,5 lesson-04 --gpu 3");
  CHECK(verdict.cases[1].passed);
  CHECK(verdict.cases[2].skipped);
  CHECK(verdict.cases[2].skip_reason == "needs 8 GPUs, this machine has 2");
}

TEST_CASE("output that is not Catch2's XML report is refused") {
  CHECK_THROWS(parse_check_xml(""));
  CHECK_THROWS(parse_check_xml("Segmentation fault"));
  CHECK_THROWS(parse_check_xml("<html><body/></html>"));
  CHECK_THROWS(parse_check_xml("<Catch2TestRun name=\"lesson04-checks\">"));  // cut short
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
