// The quiz as a state machine (src/tutor/quiz.h), driven in process without a terminal or a
// probe: each kProbe is answered with a made-up truth, each kAsk with a scripted line.
#include <deque>
#include <string>

#include <catch2/catch.hpp>

#include "tutor/quiz.h"

using namespace gpulab;
using namespace gpulab::tutor;

namespace {

// What a front end would have printed, and how the quiz ended.
struct Played {
  std::string transcript;  // kPrint and kAsk texts, with the lines a script typed echoed by the quiz
  std::string document;    // kDocument
  int probes = 0;
  int asks = 0;
  bool quit = false;
};

// Plays `quiz` to its end: every truth is `truth`, the answers are `answers`, then the end of input.
Played play(Quiz& quiz, const QuizTruth& truth, std::deque<std::string> answers) {
  Played played;
  std::deque<QuizAction> todo;
  const auto queue = [&](QuizActions actions) { todo.insert(todo.end(), actions.begin(), actions.end()); };
  queue(quiz.start());
  while (!todo.empty()) {
    const QuizAction action = todo.front();
    todo.pop_front();
    switch (action.kind) {
      case QuizAction::Kind::kPrint: played.transcript += action.text; break;
      case QuizAction::Kind::kProbe:
        ++played.probes;
        CHECK(quiz.awaiting() == QuizAwaiting::kTruth);
        queue(quiz.on_truth(truth));
        break;
      case QuizAction::Kind::kAsk:
        ++played.asks;
        played.transcript += action.text;
        CHECK(quiz.awaiting() == QuizAwaiting::kAnswer);
        if (answers.empty()) {
          queue(quiz.on_end());
        } else {
          queue(quiz.on_answer(answers.front()));
          answers.pop_front();
        }
        break;
      case QuizAction::Kind::kDocument: played.document += action.text; break;
      case QuizAction::Kind::kQuit: played.quit = true; break;
    }
  }
  return played;
}

QuizTruth failed() {
  QuizTruth truth;
  truth.error = true;
  truth.message = "CUDA error: invalid device ordinal";
  return truth;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("quiz machine: each round is run, shown, asked and scored, then the summary", "[quiz]") {
  Quiz quiz({7, 3, /*interactive=*/false, /*color=*/false, /*json=*/false});
  CHECK(quiz.awaiting() == QuizAwaiting::kNothing);
  const Played played = play(quiz, failed(), {"error", "error", "error"});
  CHECK(played.quit);
  CHECK(played.probes == 3);
  CHECK(played.asks == 3);
  CHECK(played.document.empty());
  CHECK(quiz.awaiting() == QuizAwaiting::kNothing);
  CHECK(played.transcript.rfind("seed 7 — replay with --seed 7\n\nRound 1 of 3\n", 0) == 0);
  CHECK(has(played.transcript, "Which physical GPU(s)? (a number, a comma list, or 'error') error\n  result: correct"));
  CHECK(has(played.transcript, "  truth: error\n  error: CUDA error: invalid device ordinal\n  why: "));
  CHECK(has(played.transcript, "\nRound 3 of 3\n"));
  const QuizTally& tally = quiz.tally();
  CHECK(tally.asked == 3);
  CHECK(tally.score == tally.scored);
  CHECK_FALSE(tally.ended_early);
  CHECK(has(played.transcript, "\nscore: " + std::to_string(tally.score) + "/" + std::to_string(tally.scored) + "\n"));
}

TEST_CASE("quiz machine: the same seed plays the same quiz, the rounds as QuizPlan draws them", "[quiz]") {
  Quiz first({11, 4, false, false, false}), again({11, 4, false, false, false});
  CHECK(play(first, failed(), {"0", "1", "2", "3"}).transcript == play(again, failed(), {"0", "1", "2", "3"}).transcript);
  QuizPlan plan(11);
  Quiz quiz({11, 2, false, false, false});
  const QuizActions started = quiz.start();
  REQUIRE(started.size() == 2);
  CHECK(started[1].kind == QuizAction::Kind::kProbe);
  const QuizScenario drawn = plan.next();
  CHECK(started[1].scenario.topic == drawn.topic);
  CHECK(env_text(started[1].scenario) == env_text(drawn));
}

TEST_CASE("quiz machine: a wrong answer scores nothing, and an unreadable one says what is expected", "[quiz]") {
  QuizTruth on_gpu_3;
  on_gpu_3.gpus = {3};
  on_gpu_3.visible = {2, 3};
  Quiz quiz({5, 2, false, false, false});
  const Played played = play(quiz, on_gpu_3, {"banana", "error"});
  CHECK(has(played.transcript, "banana\n  result: incorrect (could not read 'banana': expected a GPU number such as 3"));
  CHECK(has(played.transcript, "  truth: 3\n"));
  CHECK(quiz.tally().score == 0);
  CHECK(quiz.tally().rounds.size() == 2);
  CHECK(quiz.tally().rounds[0].at("answer") == "banana");
}

TEST_CASE("quiz machine: on a terminal a typo gets another try, and nothing is echoed", "[quiz]") {
  QuizTruth on_gpu_3;
  on_gpu_3.gpus = {3};
  Quiz quiz({5, 1, /*interactive=*/true, /*color=*/true, false});
  const Played played = play(quiz, on_gpu_3, {"banana", "3\r"});
  CHECK(played.asks == 2);
  CHECK(has(played.transcript, "\033[1mWhich physical GPU(s)? (a number, a comma list, or 'error') \033[0m  expected "));
  CHECK(has(played.transcript, "; try again\n"));
  CHECK_FALSE(has(played.transcript, "banana"));
  CHECK(has(played.transcript, "  result: \033[32mcorrect\033[0m"));
  CHECK(quiz.tally().rounds[0].at("answer") == "3");  // the carriage return is not part of the answer
}

TEST_CASE("quiz machine: the end of input ends the quiz early with the score so far and the document", "[quiz]") {
  Quiz quiz({2, 5, false, false, /*json=*/true});
  const Played played = play(quiz, failed(), {"error", "0"});
  CHECK(played.quit);
  CHECK(has(played.transcript, "\nend of input: the quiz stops after 2 of 5 rounds\n\nscore: "));
  const auto document = nlohmann::json::parse(played.document);
  CHECK(document.at("seed") == 2);
  CHECK(document.at("asked") == 2);
  CHECK(document.at("ended_early") == true);
  CHECK(document.at("rounds").size() == 2);
  CHECK(quiz.on_answer("error").empty());  // over: nothing more happens
  CHECK(quiz.on_end().empty());
}
