// The one checks runner: a lesson's checks program (Catch2) against the exercise or the
// solution, its verdict read from Catch2's XML report, and what became of the lesson
// programs it ran (the checks note each one that crashed or hung: GPULAB_CHECK_OUTCOMES).
#include <cstdlib>
#include <fstream>
#include <future>
#include <sstream>

#include <fmt/format.h>

#include "grading/runner.h"
#include "proc/leftovers.h"
#include "proc/temp_dir.h"
#include "proc/text_file.h"
#include "report/program_ends.h"
#include "report/message_text.h"

namespace gpulab::grading {
namespace {

// The outcome the programs' ends impose: a crash or a hang is its own outcome.
Outcome outcome_of_program_ends(const std::string& ends) { return outcome_of(parse_program_ends(ends)); }

// Catch2's JUnit report, from a second run of the same checks at the same time (each check
// runs its programs on a fresh node of its own, so the two runs do not meet).
std::future<std::string> junit_run(ProcessOptions process, const std::string& spec, const std::string& file,
                                   const std::string& outcomes, const ProcessRun& run) {
  process.argv = {process.argv.front(), spec, "--reporter", "junit", "--out", file};
  for (auto& [name, value] : process.env)
    if (name == "GPULAB_CHECK_OUTCOMES") value = outcomes;
  return std::async(std::launch::async, [process, file, run] {
    run(process);
    return read_text_file(file);
  });
}

// Reads the verdict and decides; `result` ran with Catch2's XML reporter.
void judge(ChecksResult& checks, const ProcessResult& result, const ChecksRequest& request, const Programs& programs) {
  if (result.timed_out) {
    checks.outcome = Outcome::kTimedOut;
    checks.junit_xml.clear();  // whatever Catch2 left is not a report
    checks.message = fmt::format("the checks did not finish within {} s and were stopped\n{}", request.timeout_s, checks.program_ends);
    return;
  }
  try {
    checks.verdict = parse_check_xml(result.out, programs.strip);
    checks.has_verdict = true;
  } catch (const std::exception&) {
    checks.outcome = Outcome::kCrashed;
    checks.junit_xml.clear();
    checks.message = fmt::format("the checks {} before giving a verdict\n{}{}", result.outcome(request.timeout_s),
                                 checks.program_ends, first_lines(without_prefixes(result.err, programs.strip), 20));
    return;
  }
  checks.outcome = outcome_of_program_ends(checks.program_ends);
  if (checks.outcome == Outcome::kChecksFailed && result.ok() && checks.verdict.failed() == 0 && !checks.verdict.cases.empty())
    checks.outcome = Outcome::kOk;
  if (checks.outcome == Outcome::kChecksFailed && checks.verdict.failed() == 0)
    checks.message = fmt::format("the checks {}\n{}", result.outcome(request.timeout_s), first_lines(result.err, 20));
}

}  // namespace

void fix_generated_seed() {
  setenv("GPULAB_SEED", kGradingSeed, /*overwrite=*/0);
  setenv("GPULAB_SCENARIOS", "all", /*overwrite=*/1);
}

ChecksResult run_checks(const std::string& lesson_id, const ChecksRequest& request, const Programs& programs,
                        const ProcessRun& run) {
  // A lesson program the checks started outlives them when they are stopped at their limit:
  // as an orphan of ours it is stopped below, never left spinning.
  if (request.stop_leftovers) adopt_orphans();
  TempDir scratch("gpulab-check");
  const std::string outcomes = scratch.fresh("outcomes");
  std::ofstream(outcomes).close();
  const char* spec = request.stretch ? kStretchTaskChecks : kTaskChecks;
  ProcessOptions process;
  process.argv = {programs.bin + "/lesson" + lesson_id + "-checks", spec};
  if (!request.raw) process.argv.insert(process.argv.end(), {"--reporter", "xml"});
  if (request.fail_fast) process.argv.push_back("--abort");
  const std::string target = !request.mutant.empty()    ? "mutant:" + request.mutant
                             : !request.variant.empty() ? "variant:" + request.variant
                             : request.solution         ? "solution"
                                                        : "exercise";
  process.env = {{"GPULAB_CHECK_TARGET", target}, {"GPULAB_CHECK_OUTCOMES", outcomes}};
  // A student's programs built apart: the checks run them instead of this build's. Never
  // the caller's own setting, which could point the checks at another program.
  process.env.emplace_back("GPULAB_CHECK_PROGRAMS", programs.lessons.empty() ? std::nullopt
                                                                             : std::optional<std::string>(programs.lessons));
  process.capture = !request.raw;
  process.timeout_s = request.timeout_s;
  std::future<std::string> junit;
  if (!request.junit_file.empty()) junit = junit_run(process, spec, request.junit_file, scratch.fresh("outcomes-junit"), run);
  const ProcessResult result = run(process);
  ChecksResult checks;
  if (junit.valid()) checks.junit_xml = junit.get();
  if (request.stop_leftovers) stop_leftovers();
  checks.program_ends = without_prefixes(read_text_file(outcomes), programs.strip);
  if (request.stretch && result.out.find("No test cases matched") != std::string::npos) {
    checks.no_stretch_task = true;
    checks.outcome = Outcome::kOk;
    return checks;
  }
  if (request.raw) {
    checks.outcome = result.ok() ? Outcome::kOk : result.timed_out ? Outcome::kTimedOut : outcome_of_program_ends(checks.program_ends);
    return checks;
  }
  judge(checks, result, request, programs);
  return checks;
}

ChecksBeside::ChecksBeside(const std::string& lesson_id, ChecksRequest request, const Programs& programs) {
  adopt_orphans();  // what the checks leave behind becomes ours to stop
  request.stop_leftovers = false;  // stopping every child now would stop the work beside them
  checks_ = std::async(std::launch::async, [lesson_id, request, &programs] { return run_checks(lesson_id, request, programs); });
}

ChecksBeside::~ChecksBeside() {
  if (!checks_.valid()) return;
  signal_leftovers();  // unwanted now (the work beside them failed): no need to wait them out
  checks_.wait();
  stop_leftovers();
}

ChecksResult ChecksBeside::result() {
  ChecksResult result = checks_.get();
  stop_leftovers();
  return result;
}

}  // namespace gpulab::grading
