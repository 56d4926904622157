// A quiz round as shown before the answer (src/tutor/quiz_text.h).
#include <catch2/catch.hpp>

#include "tutor/quiz.h"

using namespace gpulab;
using namespace gpulab::tutor;

TEST_CASE("quiz text: a round shows the node, the environment, the code and the question", "[quiz]") {
  QuizScenario s;
  s.node = "dgx-a100";
  s.visible = "2,3";
  s.code = QuizCode::kOnes;
  s.index = 1;
  CHECK(std::string(code_name(s.code)) == "ones");
  CHECK(env_text(s) == "CUDA_VISIBLE_DEVICES=2,3  CUDA_DEVICE_ORDER unset");
  CHECK(round_text(2, 5, s, quiz_node(s.node)) ==
        "\nRound 2 of 5\n"
        "  node: dgx-a100, 8 GPUs: GPU 0-7, all NVIDIA A100-SXM4-80GB\n"
        "  env:  CUDA_VISIBLE_DEVICES=2,3  CUDA_DEVICE_ORDER unset\n"
        "  code:\n"
        "      auto x = torch::ones({1}, torch::Device(torch::kCUDA, 1));\n"
        "  question: the physical GPU that holds x\n");
}

TEST_CASE("quiz text: an empty list is quoted, a container and ranks are named", "[quiz]") {
  QuizScenario s;
  s.node = "dgx-a100";
  s.visible = "";
  CHECK(env_text(s) == "CUDA_VISIBLE_DEVICES=\"\"  CUDA_DEVICE_ORDER unset");
  s.visible.reset();
  s.container = "2,5";
  CHECK(env_text(s).rfind("in a container: NVIDIA_VISIBLE_DEVICES=2,5  ", 0) == 0);
  CHECK(question_text(s) == "the host's GPU (the host nvidia-smi's number) that holds x");
  QuizScenario ranked;
  ranked.node = "tiny2";
  ranked.code = QuizCode::kRank;
  ranked.index = 3;
  CHECK(env_text(ranked) == "CUDA_VISIBLE_DEVICES unset  CUDA_DEVICE_ORDER unset  RANK=3 LOCAL_RANK=1 (two nodes like this one, 2 ranks each)");
}

TEST_CASE("quiz text: unlike GPUs are listed one by one with their speed ranking", "[quiz]") {
  const auto lines = node_text(quiz_node("workstation-mixed"), false);
  REQUIRE(lines.size() >= 3);
  CHECK(lines[0].rfind("workstation-mixed, ", 0) == 0);
  CHECK(lines.back().rfind("  speed, fastest first: GPU ", 0) == 0);
  CHECK(node_text(quiz_node("dgx-a100"), false).size() == 1);  // alike: one line
  CHECK(node_text(quiz_node("dgx-a100"), true).size() == 9);   // with UUIDs: one per GPU
}
