// The checks' verdict as `gpulab check` prints it (view/verdict_text.h).
#include <catch2/catch.hpp>

#include "test_lines.h"
#include "view/verdict_text.h"

using namespace gpulab;
using namespace gpulab::view;
using namespace gpulab::view_test;

TEST_CASE("render_verdict: a line per check, each failure below its check with its context", "[view][verdict]") {
  CheckVerdict verdict;
  verdict.cases.push_back({"the weight is on cuda:1", true, false, "", {}});
  CheckCase failed{"the input follows the weight", false, false, "", {}};
  failed.failures.push_back({"expected: input on physical GPU 3 — observed: on cpu", {"CUDA_VISIBLE_DEVICES=3,1"}});
  verdict.cases.push_back(failed);
  verdict.cases.push_back({"six GPUs at once", false, true, "needs 6 GPUs, found 1", {}});
  const auto lines = lines_of(render_verdict(verdict));
  REQUIRE(lines.size() == 5);
  CHECK(lines[0] == "  ✓ the weight is on cuda:1");
  CHECK(lines[1] == "  ✗ the input follows the weight");
  CHECK(lines[2] == "      expected: input on physical GPU 3 — observed: on cpu");
  CHECK(lines[3] == "          CUDA_VISIBLE_DEVICES=3,1");
  CHECK(lines[4] == "  - six GPUs at once  (skipped: needs 6 GPUs, found 1)");
}

TEST_CASE("render_verdict: a long context shows its first 8 lines and says where the rest is", "[view][verdict]") {
  std::string context;
  for (int i = 1; i <= 12; ++i) context += "line " + std::to_string(i) + "\n";
  CheckVerdict verdict;
  verdict.cases.push_back({"a check", false, false, "", {{"expected: 1 — observed: 2", {context}}}});
  const std::string text = render_verdict(verdict);
  CHECK(contains(text, "          line 8\n"));
  CHECK_FALSE(contains(text, "line 9"));
  CHECK(contains(text, "          … (--verbose shows everything)\n"));
  CHECK(render_verdict(CheckVerdict{}).empty());
}
