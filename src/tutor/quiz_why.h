// Why a quiz round came out so (docs/quiz.md): the truth in a word, one line of why in the
// terms of what the probe observed, and whether the answer rests on gpulab's model of
// FASTEST_FIRST (then it is shown but not scored). Split from quiz.cpp: the explanations are
// half the quiz's text and change with the lessons, not with the drawing or the scoring.
#pragma once

#include <string>

#include "tutor/quiz_scenario.h"

namespace gpulab::tutor {

/// "error", "none", or "2,3".
std::string truth_text(const QuizTruth& truth);
/// One line of why, in the terms of what the probe observed.
std::string why_text(const QuizScenario& s, const Node& node, const QuizTruth& truth);
/// The answer rests on the order of unlike GPUs under FASTEST_FIRST (CUDA's default). NVIDIA
/// documents only "fastest device first"; the order the node gives is gpulab's model of an
/// observed heuristic, not a CUDA fact, so such a round is shown but not scored.
bool rests_on_fastest_first(const QuizScenario& s, const Node& node);

}  // namespace gpulab::tutor
