// The truth of a quiz round (docs/quiz.md): the scenario run on the simulated node by
// bin/quiz-probe, never a second copy of CUDA's rules, and what its report shows. Split from
// quiz.cpp: the only part of the quiz that runs a process; the quiz (quiz.h) asks its front
// end to call run_scenario and hands it the truth.
#pragma once

#include <stdexcept>
#include <string>

#include "report/outcome.h"
#include "report/report_reader.h"
#include "tutor/quiz_scenario.h"

namespace gpulab::tutor {

/// The probe failed (no report, or an error that is not the scenario's answer).
class ProbeFailed : public std::runtime_error {
 public:
  ProbeFailed(Outcome outcome, const std::string& message) : std::runtime_error(message), outcome_(outcome) {}
  Outcome outcome() const { return outcome_; }

 private:
  Outcome outcome_;
};

/// Runs the scenario with `probe` (twice for kLoad: save, then load). Throws ProbeFailed.
QuizTruth run_scenario(const QuizScenario& s, const std::string& probe);
/// The truth in the probe's report. Throws ProbeFailed when the probe itself failed.
QuizTruth truth_of(const QuizScenario& s, const Report& report);

}  // namespace gpulab::tutor
