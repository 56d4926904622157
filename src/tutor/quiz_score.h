// Scoring a quiz (docs/quiz.md): the answer as typed, whether it names the truth, each
// round as --json lists it, and the tally (the score over the scored rounds, by lesson).
// Split from quiz.cpp. (cli/quiz.cpp's terminal loop still keeps a tally of its own, the
// same; it goes when that loop drives the Quiz of quiz.h.)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tutor/quiz_scenario.h"

namespace gpulab::tutor {

struct QuizAnswer {
  enum Kind { kGpus, kError, kUnparsable } kind = kUnparsable;
  std::vector<int> gpus;  ///< sorted, unique; empty: "none" (the CPU)
};

/// What to type, for "expected ...".
inline constexpr const char* kExpectedAnswer = "a GPU number such as 3, a list such as 2,3, or 'error'";

/// "3", " GPU 3 ", "2, 3", "gpus 2 3", "error", "ERR", "none". GPU lists are read by the
/// predictions' parser (course/predictions.h canonical_answer).
QuizAnswer parse_answer(const std::string& line);
bool correct(const QuizAnswer& answer, const QuizTruth& truth);

/// One round as --json lists it.
nlohmann::json round_json(int round, const QuizScenario& s, const std::string& answer, const QuizTruth& truth,
                          bool right, bool scored, const std::string& why);

/// The tally of a quiz: each round as round_json() gives it, the score over the scored rounds.
struct QuizTally {
  nlohmann::json rounds = nlohmann::json::array();
  int score = 0;   ///< scored rounds answered right
  int asked = 0;   ///< rounds answered
  int scored = 0;  ///< rounds answered that count (not resting on FASTEST_FIRST)
  bool ended_early = false;  ///< the input ended before the last round

  /// Counts one round (a round_json()).
  void add(nlohmann::json round);
  /// "\nscore: k/K\n", then the scored rounds by lesson (what to revisit) and how many
  /// rounds were not scored, as the quiz prints them at its end.
  std::string summary_text() const;
  /// The document `gpulab quiz --json` prints on stdout.
  nlohmann::json document(std::uint32_t seed) const;
};

}  // namespace gpulab::tutor
