// Why a quiz round came out so (src/tutor/quiz_why.h).
#include <catch2/catch.hpp>

#include "tutor/quiz.h"

using namespace gpulab;
using namespace gpulab::tutor;

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
