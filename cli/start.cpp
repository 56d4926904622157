// gpulab start: the interactive tutorial's front end. The tutorial itself is a state machine
// without I/O (src/tutor/tutor.h); this file reads keys, lines and saves (terminal.h), prints
// what it says, and carries out its actions in process: builds (grading::Builder), runs and
// checks (src/grading/runner.h), `check all` (grading::grade) and reset (course/reset.h), on
// the learner's workspace. It builds the first lesson before the first question, and what
// the learner will want next in the background (grading::Prebuild).
// Without a terminal or inotify (or with --no-watch) it reads the same commands as lines.
#include <unistd.h>

#include <iostream>
#include <optional>

#include "commands.h"
#include "course/reset.h"
#include "grading/grading.h"
#include "grading/runner.h"
#include "report/outcome.h"
#include "terminal.h"
#include "tutor/tutor.h"

namespace gpulab::cli {
namespace {

using tutor::Action;
using tutor::Actions;
using tutor::Awaiting;

class Start {
 public:
  Start(const tutor::TutorOptions& options, Workspace& workspace)
      : workspace_(workspace), tutor_(workspace, options, view::stdout_style()) {
    // The first question needs the lesson's program: built now, quietly (one that does not
    // compile is the tutorial's to show); then what the learner will want next, behind it.
    try {
      workspace_.builder().build({tutor_.lesson().program_target()});
    } catch (const std::exception&) {  // no build tool: the tutorial's own build will say so
    }
    const auto first = static_cast<std::size_t>(&tutor_.lesson() - tutor_.manifest().lessons.data());
    prebuild_.emplace(workspace_.build_dir(), workspace_.targets_ahead(first));
  }

  Outcome run() {
    perform(tutor_.start());
    while (!quit_) {
      switch (tutor_.awaiting()) {
        case Awaiting::kCommand: perform(command()); break;
        case Awaiting::kAnswer: perform(answer()); break;
        case Awaiting::kConfirm: perform(confirm()); break;
      }
    }
    return Outcome::kOk;
  }

 private:
  std::string exercise_file() const { return workspace_.root() + "/" + tutor_.relative_exercise(); }

  // Waits for a key (a line without a terminal) or a save of the exercise.
  Actions command() {
    std::optional<FileWatcher> watcher;
    if (!tutor_.options().no_watch) {
      watcher.emplace(exercise_file());
      if (watcher->fd() < 0 && !warned_watch_) {
        std::cout << "(not watching the file: " << watcher->why() << "; type c to check after you save)\n";
        warned_watch_ = true;
      }
    }
    Input input;
    {
      RawKeys keys;  // only while waiting: questions and commands' output use the normal terminal
      std::cout << (keys.active() ? "> " : "command (n p h l r c s a x q, Enter = check)> ") << std::flush;
      input = next_input(keys.active(), watcher && watcher->fd() >= 0 ? &*watcher : nullptr);
    }
    if (input.kind == Input::kEnd) return tutor_.on_end();
    if (input.kind == Input::kSaved) return tutor_.on_saved();
    const char key = input.text.empty() ? 'c' : input.text[0];
    std::cout << (input.kind == Input::kKey ? std::string(1, key) + "\n" : isatty(STDIN_FILENO) ? "" : input.text + "\n");
    return tutor_.on_key(key);
  }

  Actions answer() {
    const Input line = next_input(/*raw=*/false, nullptr);
    if (line.kind == Input::kEnd) return tutor_.on_end();
    if (!isatty(STDIN_FILENO)) std::cout << line.text << '\n';  // a script's answers, shown as typed
    return tutor_.on_answer(line.text);
  }

  Actions confirm() {
    Input answer;
    {
      RawKeys keys;
      answer = next_input(keys.active(), nullptr);
    }
    return tutor_.on_confirm(answer.text);
  }

  void perform(const Actions& actions) {
    for (const Action& action : actions) {
      try {
        perform(action);
      } catch (const Ended&) {
        // the command said why
      } catch (const Failure& e) {  // reset or check all could not go on; as the command would say it
        std::cerr << "gpulab: " << e.what() << '\n';
      } catch (const std::exception& e) {
        perform(tutor_.on_error(e.what()));
      }
    }
  }

  void perform(const Action& action) {
    const LessonEntry& lesson = tutor_.lesson();
    switch (action.kind) {
      case Action::Kind::kPrint: std::cout << action.text << std::flush; break;
      case Action::Kind::kSave: save(); break;
      case Action::Kind::kBuild: perform(tutor_.on_built(workspace_.builder().build(action.targets))); break;
      case Action::Kind::kRun: run(lesson, action); break;
      case Action::Kind::kCheck: perform(tutor_.on_checks(checks(lesson, action))); break;
      case Action::Kind::kCheckAll: check_all(); break;
      case Action::Kind::kReset: reset_lesson(tutor_.manifest(), lesson.id, std::cout); break;
      case Action::Kind::kQuit: quit_ = true; break;
    }
  }

  // The picture's run, with the checks beside it when they follow.
  void run(const LessonEntry& lesson, const Action& action) {
    if (action.checks_follow) checks_beside_.emplace(lesson.id, tutor_.checks_request(action), workspace_.programs());
    const grading::RunResult result = grading::run_lesson_program(lesson, tutor_.run_request(), workspace_.programs());
    perform(tutor_.on_run(result));
    checks_beside_.reset();  // taken by checks(); or, when the run failed, stopped unseen
  }

  grading::ChecksResult checks(const LessonEntry& lesson, const Action& action) {
    if (checks_beside_) return checks_beside_->result();
    return grading::run_checks(lesson.id, tutor_.checks_request(action), workspace_.programs());
  }

  void save() {
    try {
      workspace_.save_progress(tutor_.progress());
    } catch (const std::exception& e) {
      std::cout << "(progress not saved: " << e.what() << ")\n";
    }
  }

  // What `gpulab check all` does, without its files.
  void check_all() { std::cout << grading_summary(grading::grade(workspace_.manifest(), {}, std::cout)); }

  Workspace& workspace_;
  tutor::Tutor tutor_;
  std::optional<grading::Prebuild> prebuild_;  ///< what the learner will want next, built in the background
  std::optional<grading::ChecksBeside> checks_beside_;  ///< started with a run (run())
  bool warned_watch_ = false;
  bool quit_ = false;
};

}  // namespace

void setup_start(CLI::App& app, Workspace& workspace) {
  auto options = std::make_shared<tutor::TutorOptions>();
  auto* cmd = app.add_subcommand("start", "the interactive tutorial: predict, run, see the node, fix, with watch mode");
  cmd->add_flag("--no-watch", options->no_watch, "do not watch the exercise file; check with c (or Enter)");
  cmd->add_option("--lesson", options->lesson, "start at this lesson (default: the first one not passed)");
  cmd->add_option("--timeout", options->timeout_s, "seconds a run or the checks may take before they are stopped")->capture_default_str();
  cmd->callback([options, &workspace] {
    Start tutorial(*options, workspace);
    throw Ended{tutorial.run()};
  });
}

}  // namespace gpulab::cli
