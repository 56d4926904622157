// The one checks runner (grading/runner.h run_checks): what a lesson's checks program is
// asked (its tests, reporter, target, the file for the programs' ends, the student's
// programs) and how its answer becomes an outcome: Catch2's XML verdict, the lesson programs
// that crashed or hung, a time-out, a crash before any verdict, no stretch task; the JUnit
// run beside it. The checks program is a fake that records what it was asked and answers as
// Catch2 would.
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "grading/runner.h"
#include "proc/temp_dir.h"

using gpulab::Outcome;
using gpulab::ProcessOptions;
using gpulab::ProcessResult;
using gpulab::grading::ChecksRequest;
using gpulab::grading::Programs;
using gpulab::grading::run_checks;

namespace {

const char* const kPassing = R"(<?xml version="1.0" encoding="UTF-8"?>
<Catch name="lesson04-checks">
  <Group name="lesson04-checks">
    <TestCase name="nothing on GPU 0" filename="/src/tests/lessons/lesson04_checks.cpp" line="40">
      <OverallResult success="true"/>
    </TestCase>
    <OverallResults successes="1" failures="0" expectedFailures="0"/>
  </Group>
  <OverallResults successes="1" failures="0" expectedFailures="0"/>
</Catch>
)";

const char* const kFailing = R"(<?xml version="1.0" encoding="UTF-8"?>
<Catch name="lesson04-checks">
  <Group name="lesson04-checks">
    <TestCase name="the work lands on physical GPU 3 only" filename="/src/tests/lessons/lesson04_checks.cpp" line="20">
      <Failure filename="/src/tests/lessons/lesson04_checks.cpp" line="31">
        expected: weight on physical GPU 3 — observed: weight on cpu
      </Failure>
      <OverallResult success="false"/>
    </TestCase>
    <OverallResults successes="0" failures="1" expectedFailures="0"/>
  </Group>
  <OverallResults successes="0" failures="1" expectedFailures="0"/>
</Catch>
)";

const char* const kNoCases = R"(<?xml version="1.0" encoding="UTF-8"?>
<Catch name="lesson04-checks">
  <Group name="lesson04-checks">
    <OverallResults successes="0" failures="0" expectedFailures="0"/>
  </Group>
  <OverallResults successes="0" failures="0" expectedFailures="0"/>
</Catch>
)";

std::optional<std::string> variable(const ProcessOptions& options, const std::string& name) {
  for (const auto& [key, value] : options.env)
    if (key == name) return value;
  FAIL("no " << name << " in the checks' environment");
  return std::nullopt;
}

// The checks program: what it was asked (from two threads when JUnit is asked too), and
// its answer; `ends` is appended to the GPULAB_CHECK_OUTCOMES file, as the checks note a
// lesson program that crashed or hung.
struct FakeChecks {
  std::mutex mutex;
  std::vector<ProcessOptions> calls;
  ProcessResult answer{0, 0, false, kPassing, ""};
  std::string ends;
  std::string junit = "<testsuites/>";

  gpulab::grading::ProcessRun run() {
    return [this](const ProcessOptions& options) {
      const std::lock_guard<std::mutex> lock(mutex);
      calls.push_back(options);
      const auto outcomes = variable(options, "GPULAB_CHECK_OUTCOMES");
      if (options.argv.size() > 3 && options.argv[3] == "junit") {
        std::ofstream(options.argv[5]) << junit;
        return ProcessResult{0, 0, false, "", ""};
      }
      if (!ends.empty()) std::ofstream(*outcomes, std::ios::app) << ends;
      return answer;
    };
  }
};

const Programs kProgramsHere{"/build/bin", {"/build/bin/", "/src/"}, ""};

ChecksRequest request_alone() {
  ChecksRequest request;
  request.stop_leftovers = false;  // this test process's other children are none of theirs
  return request;
}

}  // namespace

TEST_CASE("the checks run their task's tests with Catch2's XML reporter, against the exercise", "[unit][grading][checks]") {
  FakeChecks checks;
  ChecksRequest request = request_alone();
  request.timeout_s = 77;
  const auto result = run_checks("04", request, kProgramsHere, checks.run());
  REQUIRE(checks.calls.size() == 1);
  const ProcessOptions& asked = checks.calls[0];
  CHECK(asked.argv == std::vector<std::string>{"/build/bin/lesson04-checks", "~[stretch]", "--reporter", "xml"});
  CHECK(asked.capture);
  CHECK(asked.timeout_s == 77);
  CHECK(variable(asked, "GPULAB_CHECK_TARGET") == "exercise");
  // Never the caller's own GPULAB_CHECK_PROGRAMS: removed, this build's programs are used.
  CHECK(variable(asked, "GPULAB_CHECK_PROGRAMS") == std::nullopt);
  CHECK(result.outcome == Outcome::kOk);
  CHECK(result.has_verdict);
  CHECK(result.verdict.passed() == 1);
  CHECK(result.message.empty());
  CHECK(result.program_ends.empty());
}

TEST_CASE("the stretch task's tests, the first failure only, and each kind of target", "[unit][grading][checks]") {
  struct Case {
    ChecksRequest request;
    std::string target;
  };
  ChecksRequest solution = request_alone();
  solution.solution = true;
  solution.stretch = true;
  solution.fail_fast = true;
  ChecksRequest mutant = request_alone();
  mutant.mutant = "wrong-index";
  mutant.solution = true;  // a mutant is judged as itself whatever else is asked
  ChecksRequest variant = request_alone();
  variant.variant = "other-order";
  for (const Case& c : {Case{solution, "solution"}, Case{mutant, "mutant:wrong-index"}, Case{variant, "variant:other-order"}}) {
    FakeChecks checks;
    run_checks("04", c.request, kProgramsHere, checks.run());
    REQUIRE(checks.calls.size() == 1);
    CHECK(variable(checks.calls[0], "GPULAB_CHECK_TARGET") == c.target);
    if (c.request.stretch)
      CHECK(checks.calls[0].argv ==
            std::vector<std::string>{"/build/bin/lesson04-checks", "[stretch]", "--reporter", "xml", "--abort"});
  }
}

TEST_CASE("a student's programs built apart are named to the checks", "[unit][grading][checks]") {
  FakeChecks checks;
  run_checks("04", request_alone(), {"/build/bin", {}, "/build/grading/alice/bin"}, checks.run());
  REQUIRE(checks.calls.size() == 1);
  CHECK(checks.calls[0].argv[0] == "/build/bin/lesson04-checks");  // this build's checks
  CHECK(variable(checks.calls[0], "GPULAB_CHECK_PROGRAMS") == "/build/grading/alice/bin");
}

TEST_CASE("a failed check is a failed lesson with its verdict, no message", "[unit][grading][checks]") {
  FakeChecks checks;
  checks.answer = {1, 0, false, kFailing, ""};
  const auto result = run_checks("04", request_alone(), kProgramsHere, checks.run());
  CHECK(result.outcome == Outcome::kChecksFailed);
  REQUIRE(result.has_verdict);
  CHECK(result.verdict.failed() == 1);
  CHECK(result.message.empty());
}

TEST_CASE("a lesson program the checks saw crash makes the lesson crashed, named without the build's path",
          "[unit][grading][checks]") {
  FakeChecks checks;
  checks.answer = {1, 0, false, kFailing, ""};
  checks.ends = "/build/bin/lesson-04 crashed with SIGSEGV (signal 11).\n";
  const auto result = run_checks("04", request_alone(), kProgramsHere, checks.run());
  CHECK(result.outcome == Outcome::kCrashed);
  CHECK(result.has_verdict);  // the verdict is kept all the same
  CHECK(result.program_ends == "lesson-04 crashed with SIGSEGV (signal 11).\n");
  // A hang only: timed out.
  FakeChecks hung;
  hung.answer = {1, 0, false, kFailing, ""};
  hung.ends = "lesson-04 did not finish within 60 s.\n";
  CHECK(run_checks("04", request_alone(), kProgramsHere, hung.run()).outcome == Outcome::kTimedOut);
}

TEST_CASE("checks stopped at their limit are timed out, whatever they printed", "[unit][grading][checks]") {
  const gpulab::TempDir scratch("checks");
  FakeChecks checks;
  checks.answer = {-1, 9, true, kPassing, ""};
  checks.ends = "lesson-04 did not finish within 60 s.\n";
  ChecksRequest request = request_alone();
  request.timeout_s = 30;
  request.junit_file = scratch.fresh("junit.xml");
  const auto result = run_checks("04", request, kProgramsHere, checks.run());
  CHECK(result.outcome == Outcome::kTimedOut);
  CHECK_FALSE(result.has_verdict);
  CHECK(result.junit_xml.empty());  // what Catch2 left is not a report
  CHECK(result.message == "the checks did not finish within 30 s and were stopped\nlesson-04 did not finish within 60 s.\n");
}

TEST_CASE("checks that end before their report are crashed, with what they said", "[unit][grading][checks]") {
  FakeChecks checks;
  checks.answer = {-1, 6, false, "<Catch name=", "terminate called\n/build/bin/lesson04-checks: aborted\n"};
  const auto result = run_checks("04", request_alone(), kProgramsHere, checks.run());
  CHECK(result.outcome == Outcome::kCrashed);
  CHECK_FALSE(result.has_verdict);
  CHECK(result.message == "the checks crashed with SIGABRT (signal 6) before giving a verdict\n"
                          "terminate called\nlesson04-checks: aborted\n");
}

TEST_CASE("no failed check is not a pass unless the checks exited 0 having run some", "[unit][grading][checks]") {
  FakeChecks failed_exit;
  failed_exit.answer = {3, 0, false, kPassing, "an exception in a listener\n"};
  const auto exited = run_checks("04", request_alone(), kProgramsHere, failed_exit.run());
  CHECK(exited.outcome == Outcome::kChecksFailed);
  CHECK(exited.message == "the checks exited with code 3\nan exception in a listener\n");
  FakeChecks none;
  none.answer = {0, 0, false, kNoCases, ""};
  const auto nothing = run_checks("04", request_alone(), kProgramsHere, none.run());
  CHECK(nothing.outcome == Outcome::kChecksFailed);  // no check ran: nothing passed
  CHECK(nothing.has_verdict);
}

TEST_CASE("a stretch task asked of a lesson without one passes, saying so", "[unit][grading][checks]") {
  FakeChecks checks;
  checks.answer = {2, 0, false, "No test cases matched '[stretch]'\n", ""};
  ChecksRequest request = request_alone();
  request.stretch = true;
  const auto result = run_checks("04", request, kProgramsHere, checks.run());
  CHECK(result.no_stretch_task);
  CHECK(result.outcome == Outcome::kOk);
  // Without --stretch the same words are no pass.
  CHECK_FALSE(run_checks("04", request_alone(), kProgramsHere, checks.run()).no_stretch_task);
}

TEST_CASE("raw checks write Catch2's console to ours: an outcome, no verdict", "[unit][grading][checks]") {
  ChecksRequest request = request_alone();
  request.raw = true;
  FakeChecks passing;
  const auto ok = run_checks("04", request, kProgramsHere, passing.run());
  CHECK(passing.calls[0].argv == std::vector<std::string>{"/build/bin/lesson04-checks", "~[stretch]"});
  CHECK_FALSE(passing.calls[0].capture);
  CHECK(ok.outcome == Outcome::kOk);
  CHECK_FALSE(ok.has_verdict);
  FakeChecks hung;
  hung.answer = {-1, 9, true, "", ""};
  CHECK(run_checks("04", request, kProgramsHere, hung.run()).outcome == Outcome::kTimedOut);
  FakeChecks failing;
  failing.answer = {1, 0, false, "", ""};
  CHECK(run_checks("04", request, kProgramsHere, failing.run()).outcome == Outcome::kChecksFailed);
  FakeChecks crashed;
  crashed.answer = {1, 0, false, "", ""};
  crashed.ends = "lesson-04 crashed with SIGSEGV (signal 11).\n";
  CHECK(run_checks("04", request, kProgramsHere, crashed.run()).outcome == Outcome::kCrashed);
}

TEST_CASE("JUnit comes from a second run beside the first, with a file of its own for the programs' ends",
          "[unit][grading][checks]") {
  const gpulab::TempDir scratch("checks");
  FakeChecks checks;
  checks.junit = "<testsuites><testsuite name=\"lesson04-checks\"/></testsuites>";
  ChecksRequest request = request_alone();
  request.fail_fast = true;
  request.junit_file = scratch.fresh("junit.xml");
  const auto result = run_checks("04", request, kProgramsHere, checks.run());
  REQUIRE(checks.calls.size() == 2);
  const ProcessOptions& junit = checks.calls[0].argv[3] == "junit" ? checks.calls[0] : checks.calls[1];
  const ProcessOptions& xml = checks.calls[0].argv[3] == "junit" ? checks.calls[1] : checks.calls[0];
  CHECK(junit.argv == std::vector<std::string>{"/build/bin/lesson04-checks", "~[stretch]", "--reporter", "junit", "--out",
                                               request.junit_file});
  CHECK(variable(junit, "GPULAB_CHECK_OUTCOMES") != variable(xml, "GPULAB_CHECK_OUTCOMES"));
  CHECK(variable(junit, "GPULAB_CHECK_TARGET") == "exercise");
  CHECK(result.junit_xml == checks.junit);
  CHECK(result.outcome == Outcome::kOk);
}

TEST_CASE("grading fixes the generated scenarios' seed unless one is given, and draws them all", "[unit][grading][checks]") {
  const char* seed = std::getenv("GPULAB_SEED");
  const char* scenarios = std::getenv("GPULAB_SCENARIOS");
  const std::optional<std::string> saved_seed = seed ? std::optional<std::string>(seed) : std::nullopt;
  const std::optional<std::string> saved_scenarios = scenarios ? std::optional<std::string>(scenarios) : std::nullopt;
  unsetenv("GPULAB_SEED");
  setenv("GPULAB_SCENARIOS", "half", 1);
  gpulab::grading::fix_generated_seed();
  CHECK(std::string(std::getenv("GPULAB_SEED")) == gpulab::grading::kGradingSeed);
  CHECK(std::string(std::getenv("GPULAB_SCENARIOS")) == "all");
  setenv("GPULAB_SEED", "42", 1);
  gpulab::grading::fix_generated_seed();
  CHECK(std::string(std::getenv("GPULAB_SEED")) == "42");  // the grader's own seed wins
  saved_seed ? setenv("GPULAB_SEED", saved_seed->c_str(), 1) : unsetenv("GPULAB_SEED");
  saved_scenarios ? setenv("GPULAB_SCENARIOS", saved_scenarios->c_str(), 1) : unsetenv("GPULAB_SCENARIOS");
}
