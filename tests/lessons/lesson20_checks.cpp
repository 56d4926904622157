// Lesson 20: a helper that borrows another GPU (beyond the article). The trainer runs on
// --device; the evaluation helper must run on --spare and leave the thread's current device
// as it was, also when the evaluation throws. Checked from outside: where the evaluation's
// batch and the trainer's next batch are, the current device the program reports during and
// after the evaluation, and which GPUs hold a CUDA context at the end. Scenarios vary the
// pair of GPUs (the spare below and above the trainer's, cuda:0 as the trainer's), the
// visible list, the node, and an evaluation that runs out of memory. The stretch: the memory
// probe leaves no context on the spare GPU (what entering a guard does depends on the build's
// CUDA: docs/reference.md, "Profiles").
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "expect.h"
#include "generated.h"
#include "gpu_requirements.h"
#include "lesson_run.h"

using namespace gpulab::test;

namespace {

const std::string kDuring = "during the evaluation";
const std::string kAfter = "after the evaluation";
const std::string kProbe = "after the memory probe";
const std::string kEnd = "at the end";

struct Scenario {
  std::string name;                    // for messages
  std::string node_name;               // GPULAB_NODE
  std::optional<std::string> visible;  // CUDA_VISIBLE_DEVICES, or unset
  int device = 0;                      // --device (CUDA index)
  int spare = 0;                       // --spare (CUDA index)
  bool out_of_memory = false;          // --eval-rows past the spare GPU's memory

  Env env() const { return {{"GPULAB_NODE", node_name}, {"CUDA_VISIBLE_DEVICES", visible}}; }
  std::vector<std::string> args() const {
    std::vector<std::string> a = {"--device", std::to_string(device), "--spare", std::to_string(spare)};
    if (out_of_memory) a.insert(a.end(), {"--eval-rows", "30000000"});  // 114 GiB of floats
    return a;
  }
  int physical(int index) const { return visible_physical(visible, env()).at(static_cast<std::size_t>(index)); }
  int needed() const {
    const auto order = cuda_order(env());
    int highest = 0;
    for (int gpu : {physical(device), physical(spare)})
      for (std::size_t i = 0; i < order.size(); ++i)
        if (order[i] == gpu) highest = std::max(highest, static_cast<int>(i) + 1);
    return highest;
  }
};

std::string cuda(int index) { return "cuda:" + std::to_string(index); }

std::string shown_fact(const nlohmann::json& fact) {
  return fact.is_number_integer() ? cuda(fact.get<int>()) : fact.is_null() ? "no such fact" : fact.dump();
}

// After the helper: the thread's device and the next batch are the trainer's again, and only
// the trainer's GPU and the spare hold a context.
void check_after(const LessonRun& run, const Scenario& s) {
  const auto& current = run.fact("current_device_after_evaluation");
  expect_that(current == s.device,
              "the trainer's current device after the evaluation helper is " + cuda(s.device) + ", as before it (" +
                  s.name + ")",
              "it is " + shown_fact(current));
  const int next = run.physical_of(kAfter, "next batch");
  expect_that(next == s.physical(s.device),
              "the trainer's next batch (index-less torch::kCUDA) " + placement(s.physical(s.device)) +
                  ", the trainer's GPU (" + s.name + ")",
              "next batch " + placement(next) + " (" + run.device_of(kAfter, "next batch") + ")");
  expect_on_gpu(run, kAfter, "weight", s.physical(s.device));
  expect_contexts(run, kEnd, {s.physical(s.device), s.physical(s.spare)});
}

void check_scenario(const Scenario& s) {
  GPULAB_REQUIRE_GPUS(s.needed(), s.env());
  INFO("scenario: " << s.name);
  const auto run = run_scenario("20", s.env(), s.args());
  if (s.out_of_memory) {
    require_that(!run.errors("evaluation").empty(),
                 "the evaluation of 30000000 rows runs out of memory on the spare GPU, and the trainer logs it (" +
                     s.name + ")",
                 "no error from the evaluation");
    check_after(run, s);
    const auto step = run.errors("next step");
    expect_that(step.empty(), "the trainer's next step runs after the failed evaluation (" + s.name + ")",
                "it failed: " + (step.empty() ? std::string() : step.front()));
    return;
  }
  const auto failed = run.errors("evaluation");
  require_that(failed.empty(), "the evaluation runs with no error (" + s.name + ")",
               "it failed: " + (failed.empty() ? std::string() : failed.front()));
  const int batch = run.physical_of(kDuring, "evaluation batch");
  expect_that(batch == s.physical(s.spare),
              "the evaluation's batch (index-less torch::kCUDA inside evaluate) " + placement(s.physical(s.spare)) +
                  ", the spare GPU (" + s.name + ")",
              "evaluation batch " + placement(batch) + " (" + run.device_of(kDuring, "evaluation batch") + ")");
  const auto& during = run.fact("current_device_during_evaluation");
  expect_that(during == s.spare,
              "the current device during the evaluation is the spare, " + cuda(s.spare) +
                  ": every index-less call evaluate() makes goes there (" + s.name + ")",
              "it is " + shown_fact(during));
  check_after(run, s);
  const auto step = run.errors("next step");
  expect_that(step.empty(), "the trainer's next step runs, its batch and model on one GPU (" + s.name + ")",
              "it failed: " + (step.empty() ? std::string() : step.front()));
}

const Scenario kDefault{"--device 2 --spare 6", gpulab::kDefaultNodeName, std::nullopt, 2, 6};

}  // namespace

TEST_CASE("the evaluation runs on the spare GPU and the trainer stays on its own: --device 2 --spare 6", "[lesson20]") {
  check_scenario(kDefault);
}

TEST_CASE("the trainer on cuda:0, the spare cuda:3", "[lesson20]") {
  check_scenario({"--device 0 --spare 3", gpulab::kDefaultNodeName, std::nullopt, 0, 3});
}

TEST_CASE("under CUDA_VISIBLE_DEVICES=4,5,6,7: --device 1 --spare 3 are physical GPUs 5 and 7", "[lesson20]") {
  check_scenario({"CUDA_VISIBLE_DEVICES=4,5,6,7, --device 1 --spare 3", gpulab::kDefaultNodeName, "4,5,6,7", 1, 3});
}

TEST_CASE("on tiny2, the spare below the trainer's GPU: --device 1 --spare 0", "[lesson20]") {
  const Scenario s{"GPULAB_NODE=tiny2, --device 1 --spare 0", "tiny2", std::nullopt, 1, 0};
  if (!simulated(s.env())) {
    WARN("needs tiny2, a simulated node: this scenario runs on the simulated node only");
    return;
  }
  check_scenario(s);
}

TEST_CASE("an evaluation that runs out of memory leaves the trainer on its own GPU", "[lesson20]") {
  Scenario s = kDefault;
  s.name = "--device 2 --spare 6 --eval-rows 30000000 (out of memory on the spare)";
  s.out_of_memory = true;
  check_scenario(s);
}

TEST_CASE("stretch: the memory probe leaves no context on the spare GPU, and its readings are right",
          "[lesson20][stretch]") {
  for (const Scenario& s : {kDefault, Scenario{"CUDA_VISIBLE_DEVICES=4,5,6,7, --device 1 --spare 3",
                                               gpulab::kDefaultNodeName, "4,5,6,7", 1, 3}}) {
    GPULAB_REQUIRE_GPUS(s.needed(), s.env());
    INFO("scenario: " << s.name);
    const auto run = run_scenario("20", s.env(), s.args());
    const auto failed = run.errors("evaluation");
    require_that(failed.empty(), "the evaluation runs with no error (" + s.name + ")",
                 "it failed: " + (failed.empty() ? std::string() : failed.front()));
    const int spare = s.physical(s.spare);
    expect_memory_on(run, kProbe, {s.physical(s.device)});
    const auto& before = run.fact("reserved_on_spare_before");
    expect_that(before == 0, "the probe reads 0 bytes reserved on the spare " + cuda(s.spare) +
                                 " before the evaluation: nothing is there yet (" + s.name + ")",
                "it reads " + before.dump());
    // At the end the spare holds the evaluation's cached blocks next to its context.
    const auto used = run.usage(kEnd);
    const std::uint64_t context = simulated(s.env()) ? node(s.node_name).gpus[static_cast<std::size_t>(spare)].context_bytes : 0;
    const std::uint64_t held = used.count(spare) != 0 ? used.at(spare) : 0;
    const auto& after = run.fact("reserved_on_spare_after");
    if (simulated(s.env())) {
      expect_that(after.is_number_integer() && held >= context && after.get<std::uint64_t>() == held - context,
                  "the probe reads " + mib(held - context) + " reserved on the spare " + cuda(s.spare) +
                      " at the end: what nvidia-smi shows there, less the context (" + s.name + ")",
                  "it reads " + (after.is_number_integer() ? mib(after.get<std::uint64_t>()) : after.dump()));
    } else {
      expect_that(after.is_number_integer() && after.get<std::int64_t>() > 0,
                  "the probe reads the memory the evaluation left reserved on the spare " + cuda(s.spare) + " (" +
                      s.name + ")",
                  "it reads " + after.dump());
    }
  }
}

// Generated: the trainer's and the spare GPU anywhere the process sees (or one past them),
// now and then an evaluation too big for the spare, on drawn nodes and lists; every tensor,
// context and error, as the reference solution.
TEST_CASE("generated scenarios: drawn trainer and spare GPUs, evaluations that fit or fail", "[lesson20]") {
  Family family;
  family.lesson = "20";
  family.what = "--device and --spare, lists, nodes, evaluations that fail";
  family.count = 12;
  family.labels = {"after the first step", kDuring, "evaluation", kAfter, "next step", kEnd};  // not the stretch's probe
  family.draw = [](Rng& rng) {
    Place place = draw_place(rng, {"dgx-a100", "tiny2"}, 0.5);
    Drawn& drawn = place.drawn;
    const int visible = place.visible;
    const int device = draw_int(rng, 0, visible - 1);
    // Now and then a spare the process does not see: the helper fails with CUDA's error.
    // Another GPU where there is one (the lesson's case); the same one otherwise.
    const int other = visible > 1 ? (device + draw_int(rng, 1, visible - 1)) % visible : device;
    const int spare = draw_int(rng, 0, 5) == 0 ? visible : other;
    drawn.args = {"--device", std::to_string(device), "--spare", std::to_string(spare)};
    // Now and then an evaluation that fails on the spare: too big for it (out of memory), or
    // of a shape LibTorch refuses (another error): the trainer must be back either way.
    const int failing = draw_int(rng, 0, 5);
    if (failing == 0) drawn.args.insert(drawn.args.end(), {"--eval-rows", "30000000"});
    if (failing == 1 || failing == 2) drawn.args.insert(drawn.args.end(), {"--eval-rows", "-" + std::to_string(draw_int(rng, 1, 9))});
    return drawn;
  };
  check_against_reference(family);
}
