// The node picture's header and diagram (src/view/picture_diagram.h), from hand-built
// reports on the shipped dgx-a100 node.
#include <catch2/catch.hpp>

#include "test_lines.h"
#include "view/picture_diagram.h"

using namespace gpulab;
using namespace gpulab::view;
using namespace gpulab::view::picture;
using namespace gpulab::view_test;

namespace {

Report on_dgx(std::optional<std::string> visible) { return gpulab::view_test::report_on("dgx-a100", std::move(visible)); }

}  // namespace

TEST_CASE("picture diagram: names of the variable, the node and a CUDA device's GPU", "[view][picture]") {
  CHECK(variable_text(std::nullopt) == "CUDA_VISIBLE_DEVICES unset");
  CHECK(variable_text(std::string("2,3")) == "CUDA_VISIBLE_DEVICES=2,3");
  const Report report = on_dgx("2,3");
  const ReportFacts facts = facts_of(report);
  CHECK(node_summary(facts.node, report) == "node dgx-a100: 8 x NVIDIA A100-SXM4-80GB");
  CHECK(node_summary(std::nullopt, report) == "node dgx-a100");
  CHECK(gpu_name(facts.mapping, 1, facts.node) == "GPU 3");
}

TEST_CASE("picture diagram: the header puts the node on the right when both fit", "[view][picture]") {
  const Report report = on_dgx("2,3");
  const ReportFacts facts = facts_of(report);
  std::string wide, narrow;
  header(wide, facts.mapping, node_summary(facts.node, report), {false, 100, true});
  CHECK(lines_of(wide).size() == 1);
  CHECK(wide.rfind("CUDA_VISIBLE_DEVICES=2,3 ", 0) == 0);
  CHECK(contains(wide, "node dgx-a100"));
  header(narrow, facts.mapping, node_summary(facts.node, report), {false, 40, true});
  CHECK(lines_of(narrow) == std::vector<std::string>{"CUDA_VISIBLE_DEVICES=2,3", "  node dgx-a100: 8 x NVIDIA A100-SXM4-8…"});
}

TEST_CASE("picture diagram: a row per CUDA device with its tensors, dropped entries marked", "[view][picture]") {
  Report report = on_dgx("2,3");
  Observation seen;
  seen.label = "end";
  seen.tensors = {{"weight", "cuda:1", 3}, {"batch", "cpu", std::nullopt}};
  report.observations.push_back(seen);
  std::string out;
  diagram(out, facts_of(report), {false, 80, true});
  CHECK(line_with(out, "cuda:0") == "  cuda:0 ─► GPU 2");
  CHECK(line_with(out, "cuda:1") == "  cuda:1 ─► GPU 3  ◄ weight");
  CHECK(contains(line_with(out, "cpu"), "◄ batch"));

  std::string dropped;
  diagram(dropped, facts_of(on_dgx("1,-1")), {false, 80, true});
  CHECK(contains(line_with(dropped, "✗"), "✗ not visible: CUDA dropped this entry"));
  std::string quiet;
  diagram(quiet, facts_of(on_dgx("1,-1")), {false, 80, false});
  CHECK(contains(line_with(quiet, "✗"), "✗ no CUDA device"));
  CHECK_FALSE(contains(quiet, "note:"));
}
