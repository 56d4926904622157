// The one runner: builds nothing, runs a lesson's program (one process, steps, or ranks under
// `gpulab launch`) in its scenario and a lesson's checks, in process. `gpulab run`, `gpulab
// check`, `check all`, `dev check` and the tutor all come here.
#pragma once

#include <sys/types.h>

#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "course/manifest.h"
#include "proc/process.h"
#include "report/outcome.h"
#include "report/run_document.h"
#include "report/verdict.h"

namespace gpulab::grading {

/// Where the programs are and what messages must not show.
struct Programs {
  std::string bin;                 ///< the build's bin/: lesson-NN, solution-NN, lessonNN-checks, gpulab
  std::vector<std::string> strip;  ///< path prefixes removed from every message
  /// Where lesson-NN is when it is not in bin/: a student's, built apart (check all --root).
  std::string lessons;

  std::string lesson_dir() const { return lessons.empty() ? bin : lessons; }
};

/// This build's programs (beside the running gpulab) and the repository's paths to strip.
Programs this_build(const Manifest& manifest);

/// How the runner, the checks runner and the builder start a program: run_process, or a
/// unit test's fake that records what was asked and answers as the program would
/// (tests/unit/grading). May be called from several threads at once.
using ProcessRun = std::function<ProcessResult(const ProcessOptions&)>;

// ---- running a lesson ----------------------------------------------------------------------

using Env = std::vector<std::pair<std::string, std::optional<std::string>>>;

/// A lesson's scenario: its variables (where the learner has not set them: theirs win) and
/// the banner that says so, e.g. " CUDA_VISIBLE_DEVICES=2,3,4,5" or " …=5 (yours)".
struct Scenario {
  Env env;
  std::string banner;
};
Scenario scenario_of(const std::vector<std::pair<std::string, std::string>>& variables, bool learner_wins = true);

/// How CUDA will read this environment's CUDA_VISIBLE_DEVICES (with the learner's own
/// variables under `env`), when it cuts the list short; nullopt otherwise or on a broken node.
std::optional<std::string> visibility_note(const Env& env);

struct RunRequest {
  bool solution = false;
  /// true: the programs print their reports (--json) and their output is captured: the
  /// document comes back whole (`gpulab run --json`, the tutor, check all's placement).
  /// false: their output streams to ours as they run (`gpulab run`), and each report is
  /// also written to a folder of its own (GPULAB_REPORT_DIR) for after_step.
  bool json = false;
  std::vector<std::string> args;  ///< the learner's own arguments (one run); empty: the manifest's
  double timeout_s = 120;
  /// false: the scenario alone, whatever this process's CUDA_VISIBLE_DEVICES,
  /// CUDA_DEVICE_ORDER and GPULAB_NODE say (a grader's placement run).
  bool learner_env = true;
  Env extra_env;  ///< set (or removed) for every program, under the scenario's variables
  /// Told before each step of a lesson in steps: its number (from 1), the count, and
  /// "title: banner args".
  std::function<void(std::size_t, std::size_t, const std::string&)> on_step;
  /// Told the launch command line of a launched lesson, before it runs (not with json).
  std::function<void(const std::string&)> on_launch;
  /// Not with json: told after each step (or the one run) that ended by itself (no signal,
  /// no time-out) what it wrote, for its picture.
  std::function<void(const RunDocument&)> after_step;
};

struct RunResult {
  Outcome outcome = Outcome::kOk;  ///< kOk, kChecksFailed (the program reported an error), kCrashed, kTimedOut
  ProcessResult last;              ///< the last program's (step's, launcher's) result
  std::string what;                ///< "crashed with SIGSEGV (signal 11)", … ("" when it ran)
  RunDocument document;            ///< json: every report the run wrote
  std::string err;                 ///< json: what the programs (not a launcher) wrote on stderr
};

/// Runs lesson `lesson` as the manifest describes its scenario; the learner's environment
/// wins over the scenario's variables. Throws std::runtime_error when it cannot start.
/// `run` starts each program (a test's fake: the argv, environment, folder and time limit
/// it gets are the run's request; what it returns and writes is the program's answer).
RunResult run_lesson_program(const LessonEntry& lesson, const RunRequest& request, const Programs& programs,
                             const ProcessRun& run = run_process);

// ---- running a lesson's checks -------------------------------------------------------------

/// Catch2 test specs: a lesson's stretch task is its checks tagged [stretch], run only by
/// `gpulab check NN --stretch` and never needed for progress or a grade.
inline constexpr const char* kTaskChecks = "~[stretch]";
inline constexpr const char* kStretchTaskChecks = "[stretch]";

struct ChecksRequest {
  bool solution = false;
  bool stretch = false;
  bool fail_fast = false;
  double timeout_s = 300;
  bool raw = false;        ///< Catch2's own console output to ours (`check --verbose`); no verdict
  /// Not empty: the checks run bin/mutant-NN-<mutant> (a known wrong answer) instead.
  std::string mutant;
  /// Not empty: the checks run bin/variant-NN-<variant> (another right answer) instead.
  std::string variant;
  /// false: processes the checks left behind are the caller's to stop (checks run side by
  /// side, where stopping every child would stop the others').
  bool stop_leftovers = true;
  std::string junit_file;  ///< also write Catch2's JUnit report here ("" none)
};

struct ChecksResult {
  /// kOk (passed), kChecksFailed, kCrashed / kTimedOut (the checks themselves, or a lesson
  /// program they ran, crashed or hung).
  Outcome outcome = Outcome::kChecksFailed;
  bool has_verdict = false;
  CheckVerdict verdict;
  bool no_stretch_task = false;  ///< stretch asked, and the lesson has no [stretch] check
  std::string program_ends;      ///< "lesson-04 crashed with SIGSEGV (signal 11).\n" per program
  std::string message;           ///< why there is no verdict ("" when there is one)
  std::string junit_xml;         ///< Catch2's JUnit report, when junit_file was asked
};

/// The checks' generated scenarios draw from GPULAB_SEED, at random when it is unset (a
/// learner's `check` meets new ones each time, half of each family, the seed printed with a
/// failure). A grade, and a mutant's or variant's verdict, must not vary from one run to the
/// next: grading fixes the seed to kGradingSeed unless GPULAB_SEED is given, and draws every
/// scenario (GPULAB_SCENARIOS=all). Call before starting threads.
inline constexpr const char* kGradingSeed = "1";
void fix_generated_seed();

/// Runs lesson `lesson_id`'s checks program against the exercise (or the solution); `run`
/// starts it (and the JUnit run beside it, on another thread).
ChecksResult run_checks(const std::string& lesson_id, const ChecksRequest& request, const Programs& programs,
                        const ProcessRun& run = run_process);

/// A lesson's checks started now, to run beside other work of this process (the
/// tutorial's picture run): on two cores the verdict then comes about with the picture.
/// Call result() once that work is over: it waits for the checks, then stops what they and
/// the work left behind. Never called (the work failed), the destructor stops the checks at
/// once, and what they left behind. This process becomes the subreaper of its descendants.
class ChecksBeside {
 public:
  ChecksBeside(const std::string& lesson_id, ChecksRequest request, const Programs& programs);
  ~ChecksBeside();
  ChecksBeside(const ChecksBeside&) = delete;
  ChecksBeside& operator=(const ChecksBeside&) = delete;
  ChecksResult result();

 private:
  std::future<ChecksResult> checks_;
};

// ---- building ------------------------------------------------------------------------------

struct BuildResult {
  bool ok = true;
  std::vector<std::pair<std::string, std::string>> failures;  ///< target -> the compiler's messages (paths stripped)
  std::string messages;  ///< everything the compiler said about the failed targets
};

/// Builds targets of a build folder. The only child process the runner may keep: compiling.
class Builder {
 public:
  virtual ~Builder() = default;
  virtual BuildResult build(const std::vector<std::string>& targets) = 0;
};

/// Ninja on just the targets (`cmake --build` for other generators, or without ninja on the
/// PATH) in `build_dir`, one build at a time per folder (the lock the ./gpulab script takes
/// too); compiler messages with `strip`'s prefixes removed. `run` starts the build (a test's
/// fake answers with Ninja's log).
std::unique_ptr<Builder> make_builder(const std::string& build_dir, std::vector<std::string> strip,
                                      ProcessRun run = run_process);

/// Builds `targets` of a Ninja build folder one at a time, quietly and at low priority, in
/// the background (`gpulab start`: what the learner will want next). Each build takes the
/// folder's lock, so other builds go between them; a target that does not compile is left
/// for whoever needs it. It runs in a child process of its own session (no terminal's
/// Ctrl-C; spared by stop_leftovers), and stops, stopping its ninja, when this object goes
/// or this process ends in any way (it watches a pipe). Nothing without Ninja.
class Prebuild {
 public:
  Prebuild(const std::string& build_dir, const std::vector<std::string>& targets);
  ~Prebuild();  ///< stops the builds, and waits until they have stopped
  Prebuild(const Prebuild&) = delete;
  Prebuild& operator=(const Prebuild&) = delete;

 private:
  int alive_ = -1;  ///< closed: the builds stop
  pid_t pid_ = -1;  ///< the builder's process
};

}  // namespace gpulab::grading
