// gpulab quiz: random placement scenarios (src/tutor/quiz.h); the learner names the physical
// GPU(s) or "error", and the truth comes from running each scenario on the simulated node.
// This file holds the options and carries out the quiz's state machine's actions. Answers are read line by line, so a
// pipe can play (docs/quiz.md).
#include <unistd.h>

#include <chrono>
#include <deque>
#include <cstdint>
#include <iostream>
#include <optional>
#include <string>


#include "commands.h"
#include "proc/self.h"
#include "report/outcome.h"
#include "tutor/quiz.h"

namespace gpulab::cli {
namespace {

struct QuizOptions {
  std::optional<std::int64_t> seed;
  int rounds = 5;
  bool json = false;
};

tutor::QuizTruth truth_of(const tutor::QuizScenario& s) {
  try {
    return tutor::run_scenario(s, executable_dir() + "/quiz-probe");
  } catch (const tutor::ProbeFailed& e) {
    std::cerr << "gpulab: " << e.what();
    throw Ended{e.outcome()};
  }
}

// Carries out the quiz's actions (src/tutor/quiz.h): the transcript to stdout (stderr with
// --json, when stdout carries only the document), answers read line by line.
void run_quiz(const QuizOptions& options) {
  const bool interactive = isatty(STDIN_FILENO) != 0;
  tutor::QuizSettings settings;
  settings.seed = static_cast<std::uint32_t>(
      options.seed.value_or(std::chrono::system_clock::now().time_since_epoch().count() % 1000000));
  settings.rounds = options.rounds;
  settings.interactive = interactive;
  settings.color = interactive && !options.json && isatty(STDOUT_FILENO) != 0;
  settings.json = options.json;
  std::ostream& transcript = options.json ? std::cerr : std::cout;
  tutor::Quiz quiz(settings);
  std::deque<tutor::QuizAction> todo;
  const auto then = [&todo](const tutor::QuizActions& more) { todo.insert(todo.end(), more.begin(), more.end()); };
  then(quiz.start());
  while (!todo.empty()) {
    const tutor::QuizAction action = todo.front();
    todo.pop_front();
    switch (action.kind) {
      case tutor::QuizAction::Kind::kPrint: transcript << action.text; break;
      case tutor::QuizAction::Kind::kAsk: {
        transcript << action.text << std::flush;
        std::string line;
        if (!std::getline(std::cin, line)) {
          then(quiz.on_end());
          break;
        }
        if (!line.empty() && line.back() == '\r') line.pop_back();
        then(quiz.on_answer(line));
        break;
      }
      case tutor::QuizAction::Kind::kProbe: then(quiz.on_truth(truth_of(action.scenario))); break;
      case tutor::QuizAction::Kind::kDocument: std::cout << action.text; break;
      case tutor::QuizAction::Kind::kQuit: break;
    }
  }
}

}  // namespace

void setup_quiz(CLI::App& app) {
  auto options = std::make_shared<QuizOptions>();
  auto* cmd = app.add_subcommand("quiz", "which physical GPU? random scenarios, answered by running them on the simulated node");
  cmd->add_option("--seed", options->seed, "replay the quiz of this seed (default: from the clock)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{4294967295}));
  cmd->add_option("--rounds", options->rounds, "how many scenarios")->check(CLI::Range(1, 1000))->capture_default_str();
  cmd->add_flag("--json", options->json, "print each round's result as JSON on stdout (the transcript goes to stderr)");
  cmd->callback([options] { run_quiz(*options); });
}

}  // namespace gpulab::cli
