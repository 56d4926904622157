// The interactive tutorial (`gpulab start`) as a state machine, with no I/O: events go in
// (a key, a line, a save, the end of input, the result of a build, a run or the checks),
// actions come out (text to print, save the progress, build, run, check, check all, reset,
// quit), and the front end (cli/start.cpp) reads the terminal and carries the actions out.
//
// For each lesson it asks the lesson's predictions before the first run, showing nothing
// that gives them away (the title and the scenario only), runs the exercise and scores each
// answer against what the run's report shows, draws the node, then asks for each prediction
// why it came out so (explain), and only then shows the explanation and the task. A save (or
// c) rebuilds the lesson, runs it, runs its checks and shows the verdict.
// Keys: n next, p previous, h hint, l list, r run, c check, s stretch, a check all,
// x reset, q quit.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "course/manifest.h"
#include "course/student_edition.h"
#include "grading/runner.h"
#include "workspace/progress.h"
#include "workspace/workspace.h"
#include "view/node_picture.h"

namespace gpulab::tutor {

struct TutorOptions {
  bool no_watch = false;
  std::string lesson;      ///< start here instead of at the first lesson not passed
  double timeout_s = 300;  ///< per run and per checks: a hang is stopped, the tutorial goes on
  /// A student edition's class file (its hint caps); none: every hint.
  std::optional<ClassSettings> class_settings;
};

/// One thing for the front end to do, in the order given.
struct Action {
  enum class Kind {
    kPrint,     ///< print `text` (and flush: it may be a prompt)
    kSave,      ///< write progress() to the progress file
    kBuild,     ///< build `targets`, then tell on_built()
    kRun,       ///< run lesson() (RunRequest: timeout_s, captured), then tell on_run();
                ///< `checks_follow`: a kCheck follows unless the run fails; the runner may
                ///< start the checks beside the run
    kCheck,     ///< run lesson()'s checks (`stretch`: the stretch task's), then tell on_checks()
    kCheckAll,  ///< grade every lesson, as `gpulab check all` does
    kReset,     ///< put lesson()'s exercise back as shipped (the learner said yes)
    kQuit,      ///< the tutorial ends
  };
  Kind kind = Kind::kPrint;
  std::string text;
  std::vector<std::string> targets;
  bool stretch = false;
  bool checks_follow = false;
};
using Actions = std::vector<Action>;

/// What the tutorial waits for.
enum class Awaiting {
  kCommand,  ///< a key or a line (on_key), a save (on_saved), or the end of input
  kAnswer,   ///< an answer to a prediction or explain question, as a line (on_answer)
  kConfirm,  ///< a key (raw if possible) saying whether to reset (on_confirm)
};

/// The index of the lesson the tutorial starts at: `lesson` (--lesson) if given, else the
/// progress file's current lesson, else the first not yet passed. Throws ManifestError for an
/// unknown lesson.
std::size_t starting_lesson(const Manifest& manifest, const Progress& progress, const std::string& lesson);

class Tutor {
 public:
  /// `goals` holds a goal for lessons whose manifest gives none (the exercise's TODO block,
  /// goal_of_text). Throws ManifestError for an unknown --lesson or current lesson.
  Tutor(Manifest manifest, Progress progress, TutorOptions options, std::string progress_file,
        view::PictureStyle style = {}, std::map<std::string, std::string> goals = {});
  /// The tutorial on the learner's workspace: its manifest, progress, class file (its hint
  /// caps, over options.class_settings), progress file and exercises' goals.
  Tutor(const Workspace& workspace, TutorOptions options, view::PictureStyle style = {});

  Actions start();  ///< the welcome, then the lesson it starts at
  Actions on_key(char key);
  Actions on_saved();
  Actions on_answer(const std::string& line);
  Actions on_confirm(const std::string& text);
  Actions on_end();
  Actions on_built(const grading::BuildResult& result);
  Actions on_run(const grading::RunResult& result);
  Actions on_checks(const grading::ChecksResult& result);
  /// A build, run or checks that could not even start (`what`: why); the tutorial goes on.
  Actions on_error(const std::string& what);

  Awaiting awaiting() const { return awaiting_; }
  const Progress& progress() const { return progress_; }
  const Manifest& manifest() const { return manifest_; }
  const LessonEntry& lesson() const { return manifest_.lessons[index_]; }
  const TutorOptions& options() const { return options_; }
  /// "lessons/01-meet-the-node/main.cpp"
  std::string relative_exercise() const;
  /// What a kRun action runs: the report captured, within the time-out.
  grading::RunRequest run_request() const;
  /// What a kCheck action (its stretch task or the task) runs, within the time-out.
  grading::ChecksRequest checks_request(const Action& action) const;
  /// The hint level reached in lesson `id` (0: none shown yet).
  int hint_level(const std::string& id) const;

 private:
  enum class Job { kNone, kPredictions, kRun, kCheck, kStretch };

  Actions enter_lesson();
  Actions ask_question();
  Actions take_answer(std::optional<std::string> answer);
  Actions build_then(Job job, std::vector<std::string> targets);
  Actions finish_job(Actions actions);
  Actions score_predictions(const RunDocument& document);
  Actions ask_explain();
  Actions take_explain(std::optional<std::size_t> choice);
  Actions explained();
  Actions task_text();
  Actions check();
  Actions stretch();
  Actions hint();
  Actions list() const;
  Actions move(char key);
  Action save();
  std::string progress_line() const;

  Manifest manifest_;
  Progress progress_;
  TutorOptions options_;
  std::string progress_file_;
  view::PictureStyle style_;
  std::map<std::string, std::string> goals_;
  std::size_t index_ = 0;
  std::map<std::string, int> hint_level_;
  Awaiting awaiting_ = Awaiting::kCommand;
  Job job_ = Job::kNone;
  bool footer_pending_ = false;  ///< the lesson's "Edit ... and save" lines, after its first run
  std::size_t question_ = 0;     ///< the prediction being asked
  int attempt_ = 0;
  std::vector<std::optional<std::string>> answers_;
  bool explaining_ = false;          ///< the kAnswer lines answer explain questions
  std::vector<std::optional<std::size_t>> choices_;  ///< the explain answers, by prediction
  int explained_right_ = 0;
};

}  // namespace gpulab::tutor
