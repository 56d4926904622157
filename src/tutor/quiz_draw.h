// Drawing a quiz (docs/quiz.md): which idea each round asks about and the scenario that
// shows it, from a seed, with portable draws so that a seed replays the same quiz on every
// standard library. Split from quiz.cpp: the quiz (quiz.h) asks a QuizPlan for each round.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tutor/quiz_scenario.h"

namespace gpulab::tutor {

/// Portable draws: the standard distributions differ between standard libraries, and a
/// seed must replay the same quiz everywhere.
class Draw {
 public:
  explicit Draw(std::uint32_t seed) : rng_(seed) {}
  int below(int n);
  /// `count` distinct values in [0, n), in drawn order.
  std::vector<int> distinct(int n, int count);

 private:
  std::mt19937 rng_;
};

/// A quiz's scenarios, drawn from a seed. Each round asks about one lesson's idea: the ideas
/// come in a shuffled order, every idea once before any comes again, and no two rounds of a
/// quiz are near-duplicates (the same idea with the same kind of CUDA_VISIBLE_DEVICES).
class QuizPlan {
 public:
  explicit QuizPlan(std::uint32_t seed) : draw_(seed) {}
  QuizScenario next();

 private:
  Draw draw_;
  std::vector<int> order_;  ///< topics still to come in this pass
  std::vector<std::string> seen_;
};

/// How many ideas the quiz draws from (one per lesson, two for lesson 05).
int quiz_topic_count();

}  // namespace gpulab::tutor
