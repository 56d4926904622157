// The quiz's state machine (quiz.h): rounds drawn from the plan, each run by the front end,
// shown, answered and scored, then the summary.
#include "tutor/quiz.h"

#include <utility>

#include <fmt/format.h>

namespace gpulab::tutor {

Quiz::Quiz(QuizSettings settings) : settings_(settings), plan_(settings.seed) {}

std::string Quiz::paint(const char* code, const std::string& text) const {
  return settings_.color ? fmt::format("\033[{}m{}\033[0m", code, text) : text;
}

QuizActions Quiz::start() {
  QuizActions actions = {{QuizAction::Kind::kPrint, fmt::format("seed {} — replay with --seed {}\n", settings_.seed, settings_.seed), {}}};
  for (auto& action : next_round()) actions.push_back(std::move(action));
  return actions;
}

QuizActions Quiz::next_round() {
  ++round_;
  scenario_ = plan_.next();
  node_ = quiz_node(scenario_.node);
  awaiting_ = QuizAwaiting::kTruth;
  return {{QuizAction::Kind::kProbe, {}, scenario_}};
}

QuizActions Quiz::ask() const {
  return {{QuizAction::Kind::kAsk, paint("1", fmt::format("Which physical GPU(s)? ({}) ", "a number, a comma list, or 'error'")), {}}};
}

QuizActions Quiz::on_truth(const QuizTruth& truth) {
  if (awaiting_ != QuizAwaiting::kTruth) return {};
  truth_ = truth;
  awaiting_ = QuizAwaiting::kAnswer;
  QuizActions actions = {{QuizAction::Kind::kPrint, round_text(round_, settings_.rounds, scenario_, *node_), {}}};
  for (auto& action : ask()) actions.push_back(std::move(action));
  return actions;
}

QuizActions Quiz::on_answer(std::string line) {
  if (awaiting_ != QuizAwaiting::kAnswer) return {};
  if (!line.empty() && line.back() == '\r') line.pop_back();
  QuizActions actions;
  if (!settings_.interactive) actions.push_back({QuizAction::Kind::kPrint, line + '\n', {}});  // a transcript shows what the script answered
  const QuizAnswer given = parse_answer(line);
  if (given.kind == QuizAnswer::kUnparsable && settings_.interactive) {  // a typo gets another try
    actions.push_back({QuizAction::Kind::kPrint, std::string("  expected ") + kExpectedAnswer + "; try again\n", {}});
    for (auto& action : ask()) actions.push_back(std::move(action));
    return actions;
  }
  const bool right = correct(given, truth_);
  const bool scored = !rests_on_fastest_first(scenario_, *node_);
  const std::string why = why_text(scenario_, *node_, truth_);
  std::string text = "  result: " + (right ? paint("32", "correct") : paint("31", "incorrect")) +
                     (given.kind == QuizAnswer::kUnparsable ? fmt::format(" (could not read '{}': expected {})", line, kExpectedAnswer) : "") +
                     (scored ? "" : " (not scored: the answer rests on gpulab's model of FASTEST_FIRST, a heuristic, not a documented CUDA rule)") +
                     '\n';
  text += "  truth: " + truth_text(truth_) + '\n';
  if (truth_.error) text += "  error: " + truth_.message + '\n';
  text += "  why: " + why + '\n';
  actions.push_back({QuizAction::Kind::kPrint, std::move(text), {}});
  tally_.add(round_json(round_, scenario_, line, truth_, right, scored, why));
  QuizActions next = round_ < settings_.rounds ? next_round() : finish({});
  for (auto& action : next) actions.push_back(std::move(action));
  return actions;
}

QuizActions Quiz::on_end() {
  if (awaiting_ != QuizAwaiting::kAnswer) return {};
  tally_.ended_early = true;
  return finish({{QuizAction::Kind::kPrint,
                  fmt::format("\nend of input: the quiz stops after {} of {} rounds\n", tally_.asked, settings_.rounds), {}}});
}

QuizActions Quiz::finish(QuizActions actions) {
  awaiting_ = QuizAwaiting::kNothing;
  actions.push_back({QuizAction::Kind::kPrint, tally_.summary_text(), {}});
  if (settings_.json) actions.push_back({QuizAction::Kind::kDocument, tally_.document(settings_.seed).dump(2) + '\n', {}});
  actions.push_back({QuizAction::Kind::kQuit, {}, {}});
  return actions;
}

}  // namespace gpulab::tutor
