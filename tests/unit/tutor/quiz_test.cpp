// The quiz (src/tutor/quiz.h): answers as typed, grading them, and seeded draws.
#include <set>

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

TEST_CASE("the same seed draws the same scenarios", "[quiz]") {
  const auto draw = [](std::uint32_t seed) {
    QuizPlan plan(seed);
    std::vector<std::string> rounds;
    for (int i = 0; i < 20; ++i) {
      const QuizScenario s = plan.next();
      rounds.push_back(s.node + " | " + env_text(s) + " | " + code_text(s).back());
    }
    return rounds;
  };
  CHECK(draw(7) == draw(7));
  CHECK(draw(7) != draw(8));
}

// A quiz that tells who learned: 20 rounds of any seed ask about at least 12 lessons' ideas,
// and never twice about one idea with the same kind of CUDA_VISIBLE_DEVICES on the same node.
TEST_CASE("20 rounds of every seed cover at least 12 lessons, with no near-duplicates", "[quiz]") {
  for (std::uint32_t seed = 0; seed < 300; ++seed) {
    QuizPlan plan(seed);
    std::set<std::string> lessons, topics, signatures;
    for (int round = 1; round <= 20; ++round) {
      const QuizScenario s = plan.next();
      INFO("seed " << seed << " round " << round << ": " << s.topic << " | " << s.node << " | " << env_text(s));
      CHECK(signatures.insert(s.topic + "|" + s.kind + "|" + s.node).second);
      lessons.insert(s.lesson);
      topics.insert(s.topic);
      const Node node = quiz_node(s.node);
      CHECK_FALSE(round_text(round, 20, s, node).empty());
      if (s.code == QuizCode::kDataParallel) CHECK(s.device_ids.size() >= 2);
    }
    INFO("seed " << seed);
    CHECK(lessons.size() >= 12);
    CHECK(static_cast<int>(topics.size()) == quiz_topic_count());  // every idea once in the first pass
  }
}

TEST_CASE("the truth is read from the probe's report", "[quiz]") {
  QuizScenario s;
  s.node = "dgx-a100";
  s.visible = "2,3";
  s.index = 1;
  const Report report = parse_report(R"({"lesson": "quiz", "backend": "sim", "node": "dgx-a100", "pid": 7,
    "env": {"CUDA_VISIBLE_DEVICES": "2,3", "CUDA_DEVICE_ORDER": null, "GPULAB_NODE": null},
    "env_at_exit": {"CUDA_VISIBLE_DEVICES": "2,3", "CUDA_DEVICE_ORDER": null, "GPULAB_NODE": null},
    "exit_code": 0, "facts": {"visible": "2,3"},
    "observations": [{"label": "placed", "gpus": [{"physical_index": 3, "used_bytes": 512, "context": true}],
                      "tensors": [{"name": "x", "device": "cuda:1", "physical_index": 3}]}], "errors": []})");
  const QuizTruth truth = truth_of(s, report);
  CHECK(truth.gpus == std::vector<int>{3});
  CHECK(truth.visible == std::vector<int>{2, 3});
  const std::string why = why_text(s, quiz_node(s.node), truth);
  CHECK(why.find("this process sees cuda:0 = GPU 2, cuda:1 = GPU 3; cuda:1 is GPU 3") != std::string::npos);
}

TEST_CASE("a round whose answer rests on FASTEST_FIRST's order of unlike GPUs is not graded as CUDA fact",
          "[unit][quiz]") {
  const Node mixed = quiz_node("workstation-mixed");
  const Node dgx = quiz_node("dgx-a100");
  QuizScenario s;
  s.node = "workstation-mixed";
  s.visible = "0,1";
  CHECK(rests_on_fastest_first(s, mixed));  // CUDA_DEVICE_ORDER unset: FASTEST_FIRST
  s.order = "FASTEST_FIRST";
  CHECK(rests_on_fastest_first(s, mixed));
  s.order = "PCI_BUS_ID";
  CHECK_FALSE(rests_on_fastest_first(s, mixed));
  s.order.reset();
  s.visible = "";
  CHECK_FALSE(rests_on_fastest_first(s, mixed));  // no GPU: no order to rest on
  s.node = "dgx-a100";
  s.visible.reset();
  CHECK_FALSE(rests_on_fastest_first(s, dgx));  // alike GPUs
}
