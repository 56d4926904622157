// The learner's rules, each stated once, on plain data: every command (cli/) and the tutor
// (src/tutor) say them through here. Text only, no I/O. (What a lesson's files and build
// targets are called is LessonEntry's, course/manifest.h: the graders below need it too.)
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "course/manifest.h"
#include "course/student_edition.h"
#include "grading/grading.h"
#include "grading/runner.h"
#include "report/outcome.h"
#include "workspace/progress.h"

namespace gpulab {

// ---- hints ---------------------------------------------------------------------------------

/// Of `lesson`'s hints, how many the learner may see: a student edition's class file may
/// cap them (docs/student-edition.md); without one, every hint.
int hints_allowed(const std::optional<ClassSettings>& settings, const LessonEntry& lesson);

/// What `gpulab hint NN LEVEL` says: `out` on stdout, `err` on stderr, and how it ends.
struct HintReply {
  std::string out;
  std::string err;
  Outcome outcome = Outcome::kOk;
};
HintReply hint_reply(const std::optional<ClassSettings>& settings, const LessonEntry& lesson, int level);

// ---- predictions ---------------------------------------------------------------------------

/// The learner has answered this lesson's predictions (the tutorial scored them): only then
/// do `run` and `explain` give the answers away unasked.
bool predicted(const LessonProgress& mine);
bool predicted(const Progress& progress, const std::string& lesson_id);

// ---- what runs and checks end with ---------------------------------------------------------

/// "== lesson 04: Title (lessons/04-…/main.cpp)\n   scenario: CUDA_VISIBLE_DEVICES=2,3 ARGS\n":
/// what `gpulab run` says before it runs (`banner`: the scenario's, grading::scenario_of;
/// `args`: the learner's, else the manifest's).
std::string run_banner(const LessonEntry& lesson, bool solution, const std::string& banner, const std::vector<std::string>& args);

/// "gpulab: lesson 04 crashed with SIGSEGV (signal 11). Your files are untouched; fix the
/// code and run it again.\n": a run that crashed or timed out (`what` says how).
std::string crash_line(const LessonEntry& lesson, const std::string& what);

/// "== lesson 04: checking your exercise's task (lessons/04-…/main.cpp)\n", before the checks.
std::string checks_header(const LessonEntry& lesson, bool stretch, bool solution = false);

/// After the checks: the verdict (not `raw`: Catch2 printed its own) and the summary line,
/// passed (with the stretch task's invitation) or not yet (the failing programs' ends, and
/// the hint); or that the lesson has no stretch task. The result has a verdict, is `raw`,
/// or found no stretch task.
std::string verdict_lines(const LessonEntry& lesson, const grading::ChecksResult& result, bool stretch, bool raw = false);

/// "\n17 lessons: 16 passed, 1 failed (exercises of /path)\n": `check all`'s last line.
std::string grading_summary(const grading::Grading& grading);

/// The compiler's messages, then "gpulab: error: could not build lesson-04 (…)": what `run`
/// and `check` say when the learner's file does not compile.
std::string build_failure_text(const grading::BuildResult& result, const std::vector<std::string>& targets);

// ---- lesson files --------------------------------------------------------------------------

/// The goal, in the lesson's own words: the exercise's "// TODO:" comment block.
std::string goal_of_text(const std::string& exercise_text);

/// The explanation as the reader sees it: EXPLAIN.md's text without its <!-- run: --> notes
/// (those are for the test that checks them against the run), then every prediction's why.
std::string explanation_text(const LessonEntry& lesson, const std::string& explain_md);

/// What a learner builds next, after lesson `first`'s program, in the order they will want
/// it: its checks, then the next lessons' programs and checks (then the earlier ones), then
/// the solutions (`solutions`: the tree has them). The tutorial builds these in the background.
std::vector<std::string> targets_ahead(const Manifest& manifest, std::size_t first, bool solutions);

}  // namespace gpulab
