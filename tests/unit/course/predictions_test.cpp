// Predict, then observe: typed answers in canonical form, and the truth read from a report.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "course/predictions.h"

using gpulab::Prediction;
using gpulab::RunDocument;

namespace {
Prediction asking(const std::string& observe, const std::string& subject = "", const std::string& at = "") {
  Prediction p;
  p.question = "?";
  p.observe = observe;
  p.subject = subject;
  p.at = at;
  p.why = "because";
  return p;
}

// The fields every report has (docs/report-schema.md), around what a test gives.
nlohmann::json with_header(nlohmann::json report) {
  const nlohmann::json env = {{"CUDA_VISIBLE_DEVICES", nullptr}, {"CUDA_DEVICE_ORDER", nullptr}, {"GPULAB_NODE", nullptr}};
  if (!report.contains("errors")) report["errors"] = nlohmann::json::array();
  if (!report.contains("observations")) report["observations"] = nlohmann::json::array();
  if (!report.contains("facts")) report["facts"] = nlohmann::json::object();
  report["lesson"] = "04";
  report["backend"] = "sim";
  report["node"] = "dgx-a100";
  report["pid"] = 7;
  report["env"] = env;
  report["env_at_exit"] = env;
  report["exit_code"] = 0;
  return report;
}

RunDocument document(const nlohmann::json& run) { return gpulab::parse_run_document(run.dump()); }

// A report as `gpulab run NN --json` prints it: x on physical GPU 3 at "end", GPUs 0 and 3 used.
const nlohmann::json kReportJson = with_header(nlohmann::json::parse(R"({
  "facts": {"device_count": 4, "device": "cuda", "worker0_gpus": "5,2", "worker1_gpus": "none"},
  "errors": [{"label": "forward", "type": "c10::Error", "message": "boom"}],
  "observations": [
    {"label": "start", "gpus": [], "tensors": [{"name": "x", "device": "cpu", "physical_index": null}]},
    {"label": "end", "gpus": [{"physical_index": 3, "used_bytes": 1048576, "context": true},
                              {"physical_index": 0, "used_bytes": 0, "context": true}],
     "tensors": [{"name": "x", "device": "cuda:1", "physical_index": 3}]}]})"));
const RunDocument kReport = document(kReportJson);
}  // namespace

TEST_CASE("typed answers are read the way a learner writes them", "[predictions]") {
  CHECK(gpulab::canonical_answer(asking("tensor", "x"), " GPU 3 ") == "3");
  CHECK(gpulab::canonical_answer(asking("tensor", "x"), "CPU") == "cpu");
  CHECK_FALSE(gpulab::canonical_answer(asking("tensor", "x"), "cuda:1"));
  CHECK(gpulab::canonical_answer(asking("gpus_used"), "3, 0 and 3") == "0,3");
  CHECK(gpulab::canonical_answer(asking("gpus_used"), "none") == "none");
  CHECK_FALSE(gpulab::canonical_answer(asking("gpus_used"), "all of them"));
  CHECK(gpulab::canonical_answer(asking("error"), "Y") == "yes");
  CHECK(gpulab::canonical_answer(asking("gpu_memory", "0"), "no") == "no");
  CHECK_FALSE(gpulab::canonical_answer(asking("error"), "maybe"));
  CHECK_FALSE(gpulab::canonical_answer(asking("fact", "device_count"), "  "));
  // A fact that lists GPUs (gpulab::WorkerPool's workerN_gpus) is read as a list of GPUs.
  CHECK(gpulab::answer_format(asking("fact", "worker1_gpus")) == gpulab::answer_format(asking("gpus_used")));
  CHECK(gpulab::canonical_answer(asking("fact", "worker1_gpus"), "GPU 5, 2") == "2,5");
  CHECK(gpulab::canonical_answer(asking("fact", "worker1_gpus"), "no gpu") == "none");
  CHECK_FALSE(gpulab::canonical_answer(asking("fact", "worker1_gpus"), "nowhere"));
  CHECK(gpulab::answer_format(asking("fact", "device_count")) == "a number");
}

TEST_CASE("the truth comes from the report: placement, GPUs used, facts, errors", "[predictions]") {
  CHECK(gpulab::observed_answer(asking("tensor", "x"), kReport) == "3");             // the last observation showing x
  CHECK(gpulab::observed_answer(asking("tensor", "x", "start"), kReport) == "cpu");
  CHECK(gpulab::observed_answer(asking("gpus_used"), kReport) == "0,3");              // a context alone counts
  CHECK(gpulab::observed_answer(asking("gpus_used", "", "start"), kReport) == "none");
  CHECK(gpulab::observed_answer(asking("gpu_memory", "0", "end"), kReport) == "yes");
  CHECK(gpulab::observed_answer(asking("gpu_memory", "5", "end"), kReport) == "no");
  CHECK(gpulab::observed_answer(asking("fact", "device_count"), kReport) == "4");
  CHECK(gpulab::observed_answer(asking("fact", "device"), kReport) == "cuda");
  CHECK(gpulab::observed_answer(asking("fact", "worker0_gpus"), kReport) == "2,5");
  CHECK(gpulab::observed_answer(asking("fact", "worker1_gpus"), kReport) == "none");
  CHECK(gpulab::observed_answer(asking("error", "forward"), kReport) == "yes");
  CHECK(gpulab::observed_answer(asking("error", "uncaught"), kReport) == "no");
  SECTION("a report that cannot tell says so instead of guessing") {
    CHECK_FALSE(gpulab::observed_answer(asking("tensor", "y"), kReport));
    CHECK_FALSE(gpulab::observed_answer(asking("fact", "rank"), kReport));
    CHECK_FALSE(gpulab::observed_answer(asking("gpus_used", "", "no such label"), kReport));
    CHECK_FALSE(gpulab::observed_answer(asking("tensor", "x"), document(nlohmann::json::parse(R"({"observations": 3})"))));
  }
  SECTION("launched and stepped runs: the rank's or the step's report") {
    Prediction p = asking("fact", "device_count");
    p.rank = 1;
    const auto ranks = document({{"ranks", {with_header({{"facts", {{"rank", 0}, {"device_count", 1}}}}),
                                             with_header({{"facts", {{"rank", 1}, {"device_count", 2}}}})}}});
    CHECK(gpulab::observed_answer(p, ranks) == "2");
    p.rank = 0;
    p.step = 1;
    const auto steps = document({{"steps", {kReportJson, with_header({{"facts", {{"device_count", 8}}}})}}});
    CHECK(gpulab::observed_answer(p, steps) == "8");
    p.step = 2;
    CHECK_FALSE(gpulab::observed_answer(p, steps));
  }
}
