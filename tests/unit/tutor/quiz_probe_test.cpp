// The truth of a quiz round (src/tutor/quiz_probe.h), read from a probe's report.
#include <catch2/catch.hpp>

#include "tutor/quiz.h"

using namespace gpulab;
using namespace gpulab::tutor;

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
