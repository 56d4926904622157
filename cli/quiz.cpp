// gpulab quiz: random placement scenarios (src/tutor/quiz.h); the learner names the physical
// GPU(s) or "error", and the truth comes from running each scenario on the simulated node.
// This file holds the options and the terminal loop. Answers are read line by line, so a
// pipe can play (docs/quiz.md).
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <iostream>
#include <map>
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
  std::ostream& out = terminal.out();
  out << tutor::round_text(round, rounds, s, node);
  const auto answer = terminal.answer();
  if (!answer) return false;
  const auto& [given, line] = *answer;
  const bool right = tutor::correct(given, truth);
  const bool scored = !tutor::rests_on_fastest_first(s, node);
  out << "  result: " << (right ? terminal.paint("32", "correct") : terminal.paint("31", "incorrect"))
      << (given.kind == QuizAnswer::kUnparsable ? fmt::format(" (could not read '{}': expected {})", line, tutor::kExpectedAnswer) : "")
      << (scored ? "" : " (not scored: the answer rests on gpulab's model of FASTEST_FIRST, a heuristic, not a documented CUDA rule)")
      << '\n';
  out << "  truth: " << tutor::truth_text(truth) << '\n';
  if (truth.error) out << "  error: " << truth.message << '\n';
  const std::string why = tutor::why_text(s, node, truth);
  out << "  why: " << why << '\n';
  results.push_back(tutor::round_json(round, s, line, truth, right, scored, why));
  return true;
}

void run_quiz(const QuizOptions& options) {
  QuizTerminal terminal(options.json);
  const auto seed = static_cast<std::uint32_t>(
      options.seed.value_or(std::chrono::system_clock::now().time_since_epoch().count() % 1000000));
  terminal.out() << fmt::format("seed {} — replay with --seed {}\n", seed, seed);
  tutor::QuizPlan plan(seed);
  nlohmann::json rounds = nlohmann::json::array();
  int score = 0, asked = 0, scored = 0;
  bool ended_early = false;
  for (int round = 1; round <= options.rounds; ++round) {
    if (!play_round(terminal, plan, round, options.rounds, rounds)) {
      ended_early = true;
      terminal.out() << fmt::format("\nend of input: the quiz stops after {} of {} rounds\n", asked, options.rounds);
      break;
    }
    ++asked;
    if (!rounds.back().at("scored").get<bool>()) continue;
    ++scored;
    score += rounds.back().at("correct").get<bool>() ? 1 : 0;
  }
  terminal.out() << fmt::format("\nscore: {}/{}\n", score, scored);
  // By idea: what to revisit. Only scored rounds count.
  std::map<std::string, std::pair<int, int>> topics;  // "05 a new thread's current device" -> right, asked
  for (const auto& r : rounds)
    if (r.at("scored").get<bool>()) {
      auto& [right, of] = topics[r.at("lesson").get<std::string>() + " " + r.at("topic").get<std::string>()];
      right += r.at("correct").get<bool>() ? 1 : 0;
      ++of;
    }
  if (!topics.empty()) terminal.out() << "by lesson (revisit the ones you missed with ./gpulab explain NN):\n";
  nlohmann::json by_topic = nlohmann::json::object();
  for (const auto& [topic, result] : topics) {
    terminal.out() << fmt::format("  {}/{}  lesson {}\n", result.first, result.second, topic);
    by_topic[topic] = {{"correct", result.first}, {"scored", result.second}};
  }
  if (scored < asked)
    terminal.out() << fmt::format("({} of {} rounds rested on gpulab's model of FASTEST_FIRST and were not scored)\n",
                                  asked - scored, asked);
  if (options.json)
    std::cout << nlohmann::json{{"seed", seed},   {"rounds", rounds}, {"score", score},     {"asked", asked},
                                {"scored", scored}, {"by_topic", by_topic}, {"ended_early", ended_early}}
                     .dump(2)
              << '\n';
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
