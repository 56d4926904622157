// Drawing a quiz (src/tutor/quiz_draw.h): seeded draws, every idea once, no near-duplicates.
#include <set>

#include <catch2/catch.hpp>

#include "tutor/quiz.h"

using namespace gpulab;
using namespace gpulab::tutor;

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
