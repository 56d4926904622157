// The run document (`gpulab run --json`) and the launch summary: one type and one parser
// each, read back from what the writers produce, and every malformed piece named.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "report/launch_summary.h"
#include "report/run_document.h"

using namespace gpulab;
using nlohmann::json;

namespace {

json report(const std::string& lesson, int rank) {
  const json env = {{"CUDA_VISIBLE_DEVICES", nullptr}, {"CUDA_DEVICE_ORDER", nullptr}, {"GPULAB_NODE", nullptr}};
  return {{"lesson", lesson}, {"backend", "sim"}, {"node", "dgx-a100"}, {"pid", 100 + rank}, {"env", env},
          {"env_at_exit", env}, {"exit_code", 0}, {"facts", {{"rank", rank}}}, {"errors", json::array()},
          {"observations", json::array({{{"label", "after forward"},
                                         {"gpus", json::array({{{"physical_index", rank}, {"used_bytes", 1024}, {"context", true}}})},
                                         {"tensors", json::array()}}})}};
}

LaunchSummary two_workers() {
  LaunchSummary summary;
  summary.backend = Backend::kSim;
  summary.nnodes = 2;
  summary.nproc_per_node = 1;
  summary.master_port = 29500;
  summary.exit_code = 1;
  summary.first_failure = 1;
  summary.workers = {{0, 0, 0, "node0", "dgx-a100", 11, 0, 0, false, {{0, 4096}}, {}},
                     {1, 0, 1, "node1", "tiny2", 12, 1, 0, false, {}, {}}};
  return summary;
}

}  // namespace

TEST_CASE("a single report is a one-part document whose JSON is the program's own text") {
  const std::string text = report("04", 0).dump(2) + "\n";
  const RunDocument document = parse_run_document(text);
  CHECK(document.kind == RunDocument::Kind::kSingle);
  REQUIRE(document.parts.size() == 1);
  INFO(document.parts[0].problem);
  REQUIRE(document.parts[0].report);
  CHECK(document.parts[0].report->lesson == "04");
  CHECK(document.json() == text);
}

TEST_CASE("steps keep their order, and a step that is not a report says why") {
  const json steps = {{"steps", json::array({report("16", 0), {{"lesson", 16}}})}};
  const RunDocument document = parse_run_document(steps.dump());
  CHECK(document.kind == RunDocument::Kind::kSteps);
  REQUIRE(document.parts.size() == 2);
  CHECK(document.parts[0].report);
  CHECK_FALSE(document.parts[1].report);
  CHECK_THAT(document.parts[1].problem, Catch::Contains("lesson"));
}

TEST_CASE("ranks take their rank from the report and their host from the launch summary") {
  json ranks = {{"ranks", json::array({report("15", 0), report("15", 1)})}};
  ranks["launch"] = json::parse(launch_summary_json(two_workers()));
  const RunDocument document = parse_run_document(ranks.dump());
  CHECK(document.kind == RunDocument::Kind::kRanks);
  REQUIRE(document.parts.size() == 2);
  CHECK(document.parts[1].rank == 1);
  CHECK(document.host_of(1) == "node1");
  CHECK(document.host_of(7).empty());
  // Written back, the document reads the same.
  const RunDocument again = parse_run_document(document.json());
  CHECK(again.parts.size() == 2);
  REQUIRE(again.launch);
  CHECK(again.launch->workers.size() == 2);
}

TEST_CASE("what is not a run document is refused") {
  CHECK_THROWS_AS(parse_run_document("not json"), ReportError);
  CHECK_THROWS_AS(parse_run_document("[1, 2]"), ReportError);
  CHECK_THROWS_AS(parse_run_document(R"({"steps": 3})"), ReportError);
}

TEST_CASE("the launch summary round-trips, and a wrong field is named") {
  const LaunchSummary summary = parse_launch_summary(launch_summary_json(two_workers()));
  CHECK(summary.nnodes == 2);
  CHECK_FALSE(summary.node_rank);
  REQUIRE(summary.first_failure);
  CHECK(*summary.first_failure == 1);
  REQUIRE(summary.worker(0) != nullptr);
  CHECK(summary.worker(0)->gpus.at(0).peak_bytes == 4096);
  CHECK(summary.worker(1)->host == "node1");
  CHECK(summary.worker(2) == nullptr);
  CHECK(summary.backend == Backend::kSim);

  // The backend is one of the two, or none ("": no host observed); anything else is refused.
  json unobserved = json::parse(launch_summary_json(two_workers()));
  unobserved["backend"] = "";
  CHECK_FALSE(parse_launch_summary(unobserved.dump()).backend);
  CHECK(json::parse(launch_summary_json(parse_launch_summary(unobserved.dump())))["backend"] == "");
  unobserved["backend"] = "Sim";
  CHECK_THROWS_AS(parse_launch_summary(unobserved.dump()), ReportError);

  json broken = json::parse(launch_summary_json(two_workers()));
  broken["workers"][1]["pid"] = "twelve";
  try {
    parse_launch_summary(broken.dump());
    FAIL("a pid that is text was accepted");
  } catch (const ReportError& e) {
    CHECK_THAT(e.what(), Catch::Contains("workers[1].pid"));
  }
  // Found by the run-document fuzzer: a number an int cannot hold was converted unchecked.
  for (const json& number : {json(2.10333e+67), json(2.5), json(4294967296LL), json(-4294967296LL)}) {
    json huge = json::parse(launch_summary_json(two_workers()));
    huge["workers"][0]["rank"] = number;
    CHECK_THROWS_AS(parse_launch_summary(huge.dump()), ReportError);
  }
}
