// A quiz round as shown before the answer (docs/quiz.md): the node, the environment, the
// lines of LibTorch and the question. Split from quiz.cpp: the text of a round, apart from
// drawing it, running it and scoring it.
#pragma once

#include <string>
#include <vector>

#include "tutor/quiz_scenario.h"

namespace gpulab::tutor {

std::string env_text(const QuizScenario& s);
/// The node: its first line, then one per GPU where they differ (or UUIDs matter).
std::vector<std::string> node_text(const Node& node, bool with_uuids);
std::vector<std::string> code_text(const QuizScenario& s);
std::string question_text(const QuizScenario& s);
/// The round as shown before the answer: node, env, code and question.
std::string round_text(int round, int rounds, const QuizScenario& s, const Node& node);

}  // namespace gpulab::tutor
