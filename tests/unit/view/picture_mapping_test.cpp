// The facts a picture draws (src/view/picture_mapping.h): the report's node, read from its
// node file, and the mapping CUDA_VISIBLE_DEVICES -> CUDA index -> physical GPU.
#include <catch2/catch.hpp>

#include "test_lines.h"
#include "view/picture_mapping.h"

using namespace gpulab;
using namespace gpulab::view::picture;

namespace {

Report on_dgx(std::optional<std::string> visible) { return gpulab::view_test::report_on("dgx-a100", std::move(visible)); }

}  // namespace

TEST_CASE("picture mapping: each list entry and the CUDA index it became, or none", "[view][picture]") {
  const Report report = on_dgx("0,2,-1,1");
  const ReportFacts facts = facts_of(report);
  REQUIRE(facts.node);
  CHECK(facts.node->name == "dgx-a100");
  CHECK(&facts.report == &report);
  const Mapping& m = facts.mapping;
  CHECK(m.derived);
  CHECK(m.physical == std::vector<int>{0, 2});
  REQUIRE(m.entries.size() == 4);
  CHECK(m.entries[1].text == "2");
  CHECK(m.entries[1].cuda == 1);
  CHECK(m.entries[2].cuda == -1);  // -1 ends the list for CUDA
  CHECK(m.entries[3].cuda == -1);
  CHECK(m.note);
}

TEST_CASE("picture mapping: unset means every GPU, and with no node file means the tensors alone tell", "[view][picture]") {
  CHECK(facts_of(on_dgx(std::nullopt)).mapping.physical.size() == 8);
  Report real = on_dgx("3");
  real.backend = Backend::kCuda;
  real.node = "some-host";  // no node file of that name
  Observation seen;
  seen.label = "end";
  seen.tensors.push_back({"weight", "cuda:1", 5});
  seen.tensors.push_back({"bias", "cpu", std::nullopt});
  real.observations.push_back(seen);
  const ReportFacts facts = facts_of(real);
  CHECK_FALSE(facts.node);
  CHECK_FALSE(facts.mapping.derived);
  CHECK(facts.mapping.physical == std::vector<int>{-1, 5});
}

TEST_CASE("picture mapping: a setenv before CUDA started counts when only it explains what was seen", "[view][picture]") {
  Report report = on_dgx("0");
  report.env_at_exit.cuda_visible_devices = "4";
  Observation seen;
  seen.label = "end";
  seen.gpus.push_back({4, 512ull << 20, true});
  seen.tensors.push_back({"x", "cuda:0", 4});
  report.observations.push_back(seen);
  const Mapping m = facts_of(report).mapping;
  CHECK(m.changed);
  REQUIRE(m.start);
  CHECK(m.start->cuda_visible_devices == "0");
  CHECK(m.physical == std::vector<int>{4});
}

TEST_CASE("picture mapping: cuda_index and each tensor's last place", "[view][picture]") {
  CHECK(cuda_index("cuda:3") == 3);
  CHECK_FALSE(cuda_index("cuda"));
  CHECK_FALSE(cuda_index("cpu"));
  CHECK_FALSE(cuda_index("cuda:1x"));
  Report report = on_dgx(std::nullopt);
  Observation first, second;
  first.tensors = {{"a", "cpu", std::nullopt}, {"b", "cuda:0", 0}};
  second.tensors = {{"a", "cuda:1", 1}};
  report.observations = {first, second};
  const auto last = last_locations(report);
  REQUIRE(last.size() == 2);
  CHECK(last[0].name == "a");
  CHECK(last[0].device == "cuda:1");  // moved, kept in the order first seen
  CHECK(last[1].name == "b");
}
