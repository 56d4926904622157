// Predict, then observe: a lesson's prediction questions (manifest "predictions"), the
// answer a learner typed, and the truth read from the run's report (`gpulab run NN --json`).
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "gpulab/manifest.h"

namespace gpulab {

/// How to type an answer to this question, e.g. "a physical GPU number, or cpu".
std::string answer_format(const Prediction& prediction);

/// The typed answer in canonical form ("3", "cpu", "0,2", "none", "yes", "8"), or nullopt
/// when it does not fit answer_format().
std::optional<std::string> canonical_answer(const Prediction& prediction, const std::string& typed);

/// What the run showed, in the same canonical form; nullopt when the report cannot tell
/// (the run crashed before that observation, say). `run` is `gpulab run NN --json`'s
/// document: one report, {"ranks": [...]} or {"steps": [...]}.
std::optional<std::string> observed_answer(const Prediction& prediction, const nlohmann::json& run);

}  // namespace gpulab
