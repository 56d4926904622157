// The quiz's scoring: a round's verdict after the answer, and the quiz's end (quiz.h).
#include <map>
#include <utility>

#include <fmt/format.h>

#include "tutor/quiz.h"

namespace gpulab::tutor {

RoundResult score_round(int round, const QuizScenario& s, const Node& node, const QuizTruth& truth, const QuizAnswer& given,
                        const std::string& line, const Paint& paint) {
  const bool right = correct(given, truth);
  const bool scored = !rests_on_fastest_first(s, node);
  std::string text =
      "  result: " + (right ? paint("32", "correct") : paint("31", "incorrect")) +
      (given.kind == QuizAnswer::kUnparsable ? fmt::format(" (could not read '{}': expected {})", line, kExpectedAnswer) : "") +
      (scored ? "" : " (not scored: the answer rests on gpulab's model of FASTEST_FIRST, a heuristic, not a documented CUDA rule)") +
      "\n";
  text += "  truth: " + truth_text(truth) + '\n';
  if (truth.error) text += "  error: " + truth.message + '\n';
  const std::string why = why_text(s, node, truth);
  text += "  why: " + why + '\n';
  return {text, round_json(round, s, line, truth, right, scored, why)};
}

QuizSummary quiz_summary(std::uint32_t seed, const nlohmann::json& rounds, bool ended_early) {
  int score = 0, scored = 0;
  const int asked = static_cast<int>(rounds.size());
  // By idea: what to revisit. Only scored rounds count.
  std::map<std::string, std::pair<int, int>> topics;  // "05 a new thread's current device" -> right, asked
  for (const auto& r : rounds) {
    if (!r.at("scored").get<bool>()) continue;
    const int right = r.at("correct").get<bool>() ? 1 : 0;
    ++scored;
    score += right;
    auto& topic = topics[r.at("lesson").get<std::string>() + " " + r.at("topic").get<std::string>()];
    topic.first += right;
    ++topic.second;
  }
  std::string text = fmt::format("\nscore: {}/{}\n", score, scored);
  if (!topics.empty()) text += "by lesson (revisit the ones you missed with ./gpulab explain NN):\n";
  nlohmann::json by_topic = nlohmann::json::object();
  for (const auto& [topic, result] : topics) {
    text += fmt::format("  {}/{}  lesson {}\n", result.first, result.second, topic);
    by_topic[topic] = {{"correct", result.first}, {"scored", result.second}};
  }
  if (scored < asked)
    text += fmt::format("({} of {} rounds rested on gpulab's model of FASTEST_FIRST and were not scored)\n", asked - scored, asked);
  nlohmann::json json{{"seed", seed},     {"rounds", rounds},     {"score", score},          {"asked", asked},
                      {"scored", scored}, {"by_topic", by_topic}, {"ended_early", ended_early}};
  return {text, json};
}

}  // namespace gpulab::tutor
