// Scoring a quiz (src/tutor/quiz_score.h): answers as typed, whether they name the truth, the tally.
#include <catch2/catch.hpp>

#include "tutor/quiz.h"

using namespace gpulab;
using namespace gpulab::tutor;

TEST_CASE("quiz answers are read the way a learner types them", "[quiz]") {
  const auto gpus = [](const std::string& line) {
    const QuizAnswer answer = parse_answer(line);
    REQUIRE(answer.kind == QuizAnswer::kGpus);
    return answer.gpus;
  };
  CHECK(gpus("3") == std::vector<int>{3});
  CHECK(gpus(" GPU 3 ") == std::vector<int>{3});
  CHECK(gpus("gpu3") == std::vector<int>{3});
  CHECK(gpus("physical GPU 3") == std::vector<int>{3});
  CHECK(gpus("3, 2") == std::vector<int>{2, 3});
  CHECK(gpus("gpus 2 3 and 2") == std::vector<int>{2, 3});
  CHECK(gpus("2;3") == std::vector<int>{2, 3});
  CHECK(gpus("none").empty());
  CHECK(gpus("CPU").empty());
  CHECK(parse_answer("error").kind == QuizAnswer::kError);
  CHECK(parse_answer("ERR").kind == QuizAnswer::kError);
  for (const char* unreadable : {"", "gpu", "-", "no gpu", "3 none", "1234", "x", "physical err", "gpu-3"})
    CHECK(parse_answer(unreadable).kind == QuizAnswer::kUnparsable);
}

TEST_CASE("an answer is correct when it names the truth: the GPUs, or the error", "[quiz]") {
  QuizTruth on_2_and_3;
  on_2_and_3.gpus = {2, 3};
  CHECK(correct(parse_answer("3,2"), on_2_and_3));
  CHECK_FALSE(correct(parse_answer("2"), on_2_and_3));
  CHECK_FALSE(correct(parse_answer("error"), on_2_and_3));
  CHECK_FALSE(correct(parse_answer("what"), on_2_and_3));
  QuizTruth failed;
  failed.error = true;
  CHECK(correct(parse_answer("error"), failed));
  CHECK_FALSE(correct(parse_answer("none"), failed));
  CHECK(correct(parse_answer("cpu"), QuizTruth{}));
  CHECK(truth_text(on_2_and_3) == "2,3");
  CHECK(truth_text(failed) == "error");
  CHECK(truth_text(QuizTruth{}) == "none");
}

TEST_CASE("quiz tally: the score counts scored rounds only, by lesson", "[quiz]") {
  QuizTally tally;
  tally.add({{"lesson", "02"}, {"topic", "cuda:i"}, {"correct", true}, {"scored", true}});
  tally.add({{"lesson", "02"}, {"topic", "cuda:i"}, {"correct", false}, {"scored", true}});
  tally.add({{"lesson", "07"}, {"topic", "order"}, {"correct", true}, {"scored", false}});
  CHECK(tally.asked == 3);
  CHECK(tally.scored == 2);
  CHECK(tally.score == 1);
  CHECK(tally.summary_text() ==
        "\nscore: 1/2\nby lesson (revisit the ones you missed with ./gpulab explain NN):\n  1/2  lesson 02 cuda:i\n"
        "(1 of 3 rounds rested on gpulab's model of FASTEST_FIRST and were not scored)\n");
  CHECK(tally.document(9).at("by_topic") == nlohmann::json{{"02 cuda:i", {{"correct", 1}, {"scored", 2}}}});
  CHECK(QuizTally().summary_text() == "\nscore: 0/0\n");
}
