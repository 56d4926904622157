// Predict, then observe: a lesson's prediction questions (manifest "predictions"), the
// answer a learner typed, and the truth read from the run's report (`gpulab run NN --json`).
#pragma once

#include <optional>
#include <string>

#include "course/manifest.h"
#include "report/run_document.h"

namespace gpulab {

/// How to type an answer to this question, e.g. "a physical GPU number, or cpu".
std::string answer_format(const Prediction& prediction);

/// The typed answer in canonical form ("3", "cpu", "0,2", "none", "yes", "8"), or nullopt
/// when it does not fit answer_format().
std::optional<std::string> canonical_answer(const Prediction& prediction, const std::string& typed);

/// What the run showed, in the same canonical form; nullopt when the report cannot tell
/// (the run crashed before that observation, say). `run` is what `gpulab run NN --json`
/// prints: one report, one per rank (the prediction's `rank`) or per step (its `step`).
std::optional<std::string> observed_answer(const Prediction& prediction, const RunDocument& run);

}  // namespace gpulab
