// gpulab quiz: random placement scenarios (src/tutor/quiz.h); the learner names the physical
// GPU(s) or "error", and the truth comes from running each scenario on the simulated node.
// This file holds the options and the terminal loop. Answers are read line by line, so a
// pipe can play (docs/quiz.md).
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <iostream>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "proc/self.h"
#include "report/outcome.h"
#include "tutor/quiz.h"

namespace gpulab::cli {
namespace {

using tutor::QuizAnswer;

struct QuizOptions {
  std::optional<std::int64_t> seed;
  int rounds = 5;
  bool json = false;
};

// The quiz's terminal: where the transcript goes, and whether a person is typing.
class QuizTerminal {
 public:
  explicit QuizTerminal(bool json)
      : interactive_(isatty(STDIN_FILENO) != 0),
        // With --json the transcript goes to stderr and stdout carries only the JSON document.
        out_(json ? std::cerr : std::cout), color_(interactive_ && !json && isatty(STDOUT_FILENO) != 0) {}

  std::ostream& out() { return out_; }
  std::string paint(const char* code, const std::string& text) const {
    return color_ ? fmt::format("\033[{}m{}\033[0m", code, text) : text;
  }

  // The learner's answer and the line typed; nullopt at the end of input. On a terminal a
  // typo gets another try; a script's line counts as given.
  std::optional<std::pair<QuizAnswer, std::string>> answer() {
    for (;;) {
      out_ << paint("1", fmt::format("Which physical GPU(s)? ({}) ", "a number, a comma list, or 'error'")) << std::flush;
      std::string line;
      if (!std::getline(std::cin, line)) return std::nullopt;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (!interactive_) out_ << line << '\n';  // a transcript shows what the script answered
      const QuizAnswer answer = tutor::parse_answer(line);
      if (answer.kind != QuizAnswer::kUnparsable || !interactive_) return std::make_pair(answer, line);
      out_ << "  expected " << tutor::kExpectedAnswer << "; try again\n";
    }
  }

 private:
  bool interactive_;
  std::ostream& out_;
  bool color_;
};

tutor::QuizTruth truth_of(const tutor::QuizScenario& s) {
  try {
    return tutor::run_scenario(s, executable_dir() + "/quiz-probe");
  } catch (const tutor::ProbeFailed& e) {
    std::cerr << "gpulab: " << e.what();
    throw Ended{e.outcome()};
  }
}

// One round: the scenario, the answer, the verdict. False at the end of input.
bool play_round(QuizTerminal& terminal, tutor::QuizPlan& plan, int round, int rounds, nlohmann::json& results) {
  const tutor::QuizScenario s = plan.next();
  const Node node = tutor::quiz_node(s.node);
  const tutor::QuizTruth truth = truth_of(s);
  terminal.out() << tutor::round_text(round, rounds, s, node);
  const auto answer = terminal.answer();
  if (!answer) return false;
  const auto paint = [&terminal](const char* code, const std::string& text) { return terminal.paint(code, text); };
  const tutor::RoundResult result = tutor::score_round(round, s, node, truth, answer->first, answer->second, paint);
  terminal.out() << result.text;
  results.push_back(result.json);
  return true;
}

void run_quiz(const QuizOptions& options) {
  QuizTerminal terminal(options.json);
  const auto seed = static_cast<std::uint32_t>(
      options.seed.value_or(std::chrono::system_clock::now().time_since_epoch().count() % 1000000));
  terminal.out() << fmt::format("seed {} — replay with --seed {}\n", seed, seed);
  tutor::QuizPlan plan(seed);
  nlohmann::json rounds = nlohmann::json::array();
  bool ended_early = false;
  for (int round = 1; round <= options.rounds && !ended_early; ++round)
    if (!play_round(terminal, plan, round, options.rounds, rounds)) {
      ended_early = true;
      terminal.out() << fmt::format("\nend of input: the quiz stops after {} of {} rounds\n", rounds.size(), options.rounds);
    }
  const tutor::QuizSummary summary = tutor::quiz_summary(seed, rounds, ended_early);
  terminal.out() << summary.text;
  if (options.json) std::cout << summary.json.dump(2) << '\n';
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
