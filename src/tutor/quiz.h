// gpulab quiz as a state machine, like the tutor's (tutor.h): random placement scenarios (a
// node, CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER, a line of LibTorch); the learner names the
// physical GPU(s) or "error". Events go in (the truth of a round, a line typed, the end of
// input), actions come out (text for the transcript, a scenario to run, a prompt, the --json
// document, the end), and a front end reads the terminal and runs the probe. The machine
// itself touches no terminal and runs no process; it reads the shipped node files. The truth
// comes from running the scenario on the simulated node (bin/quiz-probe, quiz_probe.h),
// never from a second copy of CUDA's rules here (docs/quiz.md).
//
// Its parts, each in a file of its own: quiz_scenario.h (a round's data), quiz_draw.h
// (choosing the rounds from a seed), quiz_text.h (a round as shown), quiz_probe.h (its
// truth), quiz_why.h (why it came out so), quiz_score.h (answers and the tally). This header
// includes them all. The terminal loop is cli/quiz.cpp, which still calls the parts itself;
// tests/cli/quiz_test.cpp proves that this machine prints, byte for byte, what it prints.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/node.h"
#include "tutor/quiz_draw.h"
#include "tutor/quiz_probe.h"
#include "tutor/quiz_scenario.h"
#include "tutor/quiz_score.h"
#include "tutor/quiz_text.h"
#include "tutor/quiz_why.h"

namespace gpulab::tutor {

struct QuizSettings {
  std::uint32_t seed = 0;    ///< the quiz this seed draws (--seed)
  int rounds = 5;            ///< how many rounds (--rounds)
  bool interactive = false;  ///< a person types: a typo gets another try; else each line is echoed and counts
  bool color = false;        ///< ANSI colours in the transcript
  bool json = false;         ///< the document at the end (--json)
};

/// One thing for the front end to do, in the order given.
struct QuizAction {
  enum class Kind {
    kPrint,     ///< print `text` to the transcript (stderr with --json, else stdout)
    kProbe,     ///< find `scenario`'s truth (run_scenario), then tell on_truth()
    kAsk,       ///< print the prompt `text`, flush, read a line: on_answer(), or on_end() at the end of input
    kDocument,  ///< print `text` on stdout: the --json document
    kQuit,      ///< the quiz is over
  };
  Kind kind = Kind::kPrint;
  std::string text;
  QuizScenario scenario;
};
using QuizActions = std::vector<QuizAction>;

/// What the quiz waits for.
enum class QuizAwaiting {
  kTruth,    ///< the truth of the scenario of the last kProbe (on_truth)
  kAnswer,   ///< a line (on_answer) or the end of input (on_end)
  kNothing,  ///< the quiz is over (after kQuit), or not started
};

class Quiz {
 public:
  explicit Quiz(QuizSettings settings);

  QuizActions start();  ///< the seed line, then the first round's scenario to run
  QuizActions on_truth(const QuizTruth& truth);
  QuizActions on_answer(std::string line);
  QuizActions on_end();

  QuizAwaiting awaiting() const { return awaiting_; }
  int round() const { return round_; }  ///< the round being played (1-based; 0 before start)
  const QuizScenario& scenario() const { return scenario_; }
  const QuizTally& tally() const { return tally_; }

 private:
  QuizActions next_round();
  QuizActions ask() const;
  QuizActions finish(QuizActions actions);
  std::string paint(const char* code, const std::string& text) const;

  QuizSettings settings_;
  QuizPlan plan_;
  QuizTally tally_;
  QuizAwaiting awaiting_ = QuizAwaiting::kNothing;
  int round_ = 0;
  QuizScenario scenario_;
  std::optional<Node> node_;
  QuizTruth truth_;
};

}  // namespace gpulab::tutor
