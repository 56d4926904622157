// Lesson 05: the current device is per thread (claims A2.3, A2.4, A2.5, A3.3). The trainer
// starts one worker per GPU; each must train on its own GPU, inside its own thread. The
// checks look at the node while every worker is held inside its step ("every worker
// mid-step"): what nvidia-smi shows then is what the worker threads allocated themselves, so
// a step run anywhere else (the main thread, after join) shows nothing there. Scenarios vary
// the node, CUDA_VISIBLE_DEVICES and the devices the workers are given.
#include <algorithm>
#include <map>
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
const std::string kMidStep = "every worker mid-step";

struct Scenario {
  std::string name;                 // for messages: "CUDA_VISIBLE_DEVICES=6,1, --devices 1,0"
  std::string node_name;            // GPULAB_NODE
  std::optional<std::string> visible;  // CUDA_VISIBLE_DEVICES, or unset
  std::vector<int> devices;         // --devices (CUDA indices); empty: one worker per visible GPU

  Env env() const { return {{"GPULAB_NODE", node_name}, {"CUDA_VISIBLE_DEVICES", visible}}; }
  std::vector<std::string> args() const {
    if (devices.empty()) return {};
    std::string list;
    for (int d : devices) list += (list.empty() ? "" : ",") + std::to_string(d);
    return {"--devices", list};
  }
};

// The physical GPU (nvidia-smi's number) behind each CUDA index this scenario makes visible:
// the list's integer entries name GPUs in CUDA's order (lesson 02, lesson 07).
std::vector<int> visible_gpus(const Scenario& s) {
  const auto order = cuda_order({{"GPULAB_NODE", s.node_name}});
  if (!s.visible) return order;
  std::vector<int> physical;
  std::string list = *s.visible;
  for (std::string::size_type start = 0; start <= list.size();) {
    const auto comma = list.find(',', start);
    physical.push_back(order.at(static_cast<std::size_t>(std::stoi(list.substr(start, comma - start)))));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return physical;
}

// Worker w's GPU, physical: behind cuda:devices[w] (or cuda:w with no --devices).
std::vector<int> workers_gpus(const Scenario& s) {
  const auto visible = visible_gpus(s);
  std::vector<int> physical;
  if (s.devices.empty()) return visible;
  for (int d : s.devices) physical.push_back(visible.at(static_cast<std::size_t>(d)));
  return physical;
}

int gpus_needed(const Scenario& s) {
  const auto order = cuda_order({{"GPULAB_NODE", s.node_name}});
  int needed = 1;
  for (int gpu : workers_gpus(s))
    needed = std::max(needed, static_cast<int>(std::find(order.begin(), order.end(), gpu) - order.begin()) + 1);
  return std::max(needed, gpulab::test::gpus_needed(s.env()));
}

// The tensor named `name` at an observation, or null when the program showed none.
const nlohmann::json* tensor_at(const LessonRun& run, const std::string& label, const std::string& name) {
  for (const auto& t : run.observation(label).at("tensors"))
    if (t.at("name") == name) return &t;
  return nullptr;
}

std::string cuda(int index) { return "cuda:" + std::to_string(index); }

// While every worker is inside its step: worker w's weight on its own GPU, and nvidia-smi
// shows this process using more than a context on each worker's GPU and nothing elsewhere.
void check_workers_mid_step(const Scenario& s) {
  INFO("scenario: " << s.name);
  const auto run = run_scenario("05", s.env(), s.args());
  require_no_errors(run, "the trainer runs");
  const auto expected = workers_gpus(s);
  const std::set<int> expected_set(expected.begin(), expected.end());
  for (std::size_t w = 0; w < expected.size(); ++w) {
    const std::string worker = "worker " + std::to_string(w);
    const std::string device = cuda(s.devices.empty() ? static_cast<int>(w) : s.devices[w]);
    const std::string goal =
        worker + "'s weight " + placement(expected[w]) + " (" + device + ") while the workers run (" + s.name + ")";
    const auto* weight = tensor_at(run, kMidStep, worker);
    if (weight == nullptr) {
      expect_that(false, goal, worker + " had no model while the workers ran: its step did not run in its thread");
      continue;
    }
    const int observed = weight->at("physical_index").is_null() ? -1 : weight->at("physical_index").get<int>();
    expect_that(observed == expected[w], goal,
                "its weight " + placement(observed) + " (" + weight->at("device").get<std::string>() + ")");
  }
  // The training step is written for "the current GPU": the worker's thread must have made its
  // GPU current, not only moved its tensors there by index (fact worker_w_current_device).
  for (std::size_t w = 0; w < expected.size(); ++w) {
    const int index = s.devices.empty() ? static_cast<int>(w) : s.devices[w];
    const auto& current = run.fact("worker_" + std::to_string(w) + "_current_device");
    expect_that(current == index,
                "worker " + std::to_string(w) + "'s thread has " + cuda(index) +
                    " as its current device, where its step's index-less torch::kCUDA goes (" + s.name + ")",
                "its current device is " + (current.is_number_integer() ? cuda(current.get<int>()) : current.dump()));
  }
  // From outside, as nvidia-smi sees the process while the workers are inside their steps.
  const auto used = run.usage(kMidStep);
  expect_that(listed_on(used) == expected_set,
              "nvidia-smi shows this process on " + gpus(expected_set) + " while the workers run, the workers' GPUs (" +
                  s.name + ")",
              "on " + gpus(listed_on(used)));
  for (int gpu : expected_set) {
    if (used.count(gpu) == 0) continue;  // reported just above
    const std::uint64_t context =
        simulated(s.env()) ? node(s.node_name).gpus[static_cast<std::size_t>(gpu)].context_bytes : 0;
    expect_that(used.at(gpu) > context,
                "more than a CUDA context's " + mib(context) + " on " + gpus({gpu}) +
                    " while the workers run: a worker's model and batch (" + s.name + ")",
                mib(used.at(gpu)) + " there");
  }
  const auto contexts = run.contexts("after training");
  const std::set<int> with_context(contexts.begin(), contexts.end());
  expect_that(with_context == expected_set,
              "CUDA contexts after training on the workers' GPUs only: " + gpus(expected_set) + " (" + s.name + ")",
              "on " + gpus(with_context));
}

const Scenario kGiven{"the default node, --devices 2,3,5", gpulab::kDefaultNodeName, std::nullopt, {2, 3, 5}};
}  // namespace

TEST_CASE("the main thread: .cuda() lands on the device set_device chose, an explicit index wins", "[lesson05]") {
  GPULAB_REQUIRE_GPUS(gpus_needed(kGiven), kGiven.env());
  const auto run = run_scenario("05", kGiven.env(), kGiven.args());
  const auto physical = visible_gpus(kGiven);
  expect_equal("the main thread's current device after set_device(2)", run.fact("main_thread_current_device"), 2);
  expect_that(run.device_of("main thread", "default") == "cuda:2", "the tensor moved with .cuda() on cuda:2",
              "on " + run.device_of("main thread", "default"));
  expect_on_gpu(run, "main thread", "default", physical[2]);
  expect_that(run.device_of("main thread", "explicit") == "cuda:5",
              "the tensor moved with .cuda(5) on cuda:5, whatever the current device",
              "on " + run.device_of("main thread", "explicit"));
  expect_on_gpu(run, "main thread", "explicit", physical[5]);
}

TEST_CASE("a new thread starts on cuda:0, whatever the main thread selected", "[lesson05]") {
  GPULAB_REQUIRE_GPUS(gpus_needed(kGiven), kGiven.env());
  const auto run = run_scenario("05", kGiven.env(), kGiven.args());
  for (std::size_t w = 0; w < kGiven.devices.size(); ++w) {
    const auto& started = run.fact("worker_" + std::to_string(w) + "_started_on");
    expect_that(started == 0,
                "worker " + std::to_string(w) + " starts on cuda:0 (recorded before anything selects a device)",
                "it starts on " + started.dump());
  }
}

TEST_CASE("each worker trains on its own GPU: --devices 2,3,5 on the default node", "[lesson05]") {
  GPULAB_REQUIRE_GPUS(gpus_needed(kGiven), kGiven.env());
  check_workers_mid_step(kGiven);
}

TEST_CASE("each worker trains on its own GPU: one worker per GPU of CUDA_VISIBLE_DEVICES=4,5,6,7", "[lesson05]") {
  const Scenario s{"CUDA_VISIBLE_DEVICES=4,5,6,7, one worker per visible GPU", gpulab::kDefaultNodeName, "4,5,6,7", {}};
  GPULAB_REQUIRE_GPUS(gpus_needed(s), s.env());
  check_workers_mid_step(s);
}

TEST_CASE("each worker trains on its own GPU: CUDA_VISIBLE_DEVICES=6,1 with --devices 1,0", "[lesson05]") {
  const Scenario s{"CUDA_VISIBLE_DEVICES=6,1, --devices 1,0", gpulab::kDefaultNodeName, "6,1", {1, 0}};
  GPULAB_REQUIRE_GPUS(gpus_needed(s), s.env());
  check_workers_mid_step(s);
}

TEST_CASE("each worker trains on its own GPU: workstation-mixed, --devices 3,0", "[lesson05]") {
  const Scenario s{"GPULAB_NODE=workstation-mixed, --devices 3,0", "workstation-mixed", std::nullopt, {3, 0}};
  if (!simulated(s.env())) {
    WARN("needs 4 GPUs, found 0 of workstation-mixed: this scenario runs on the simulated node only");
    return;
  }
  check_workers_mid_step(s);
}

TEST_CASE("stretch: each worker names, from inside its thread, the UUID of the GPU it trains on",
          "[lesson05][stretch]") {
  for (const Scenario& s : {kGiven, Scenario{"CUDA_VISIBLE_DEVICES=6,1, --devices 1,0", gpulab::kDefaultNodeName,
                                             "6,1", {1, 0}}}) {
    GPULAB_REQUIRE_GPUS(gpus_needed(s), s.env());
    INFO("scenario: " << s.name);
    const auto run = run_scenario("05", s.env(), s.args());
    const auto uuids = gpu_uuids(s.env());
    for (std::size_t w = 0; w < s.devices.size(); ++w) {
      const std::string worker = "worker " + std::to_string(w);
      const auto* weight = tensor_at(run, kMidStep, worker);
      require_that(weight != nullptr && weight->at("physical_index").is_number_integer(),
                   worker + "'s weight on a GPU while the workers run (" + s.name + ")", "none there");
      const int gpu = weight->at("physical_index").get<int>();
      const auto& named = run.fact("worker_" + std::to_string(w) + "_gpu");
      const std::string expected = uuids.at(static_cast<std::size_t>(gpu));
      expect_that(named == expected,
                  worker + " names " + expected + ", the UUID nvidia-smi -L shows for " + gpus({gpu}) +
                      ", where its weight is (" + s.name + ")",
                  "it names " + named.dump());
    }
  }
}

// Generated: lists of CUDA indices for the workers (repeated, in any order) under a list of
// plain numbers; where each worker trains and which GPUs hold memory and contexts, as the
// reference solution.
TEST_CASE("generated scenarios: workers on drawn CUDA indices under drawn lists", "[lesson05]") {
  Family family;
  family.lesson = "05";
  family.what = "--devices lists under CUDA_VISIBLE_DEVICES lists";
  family.count = 8;  // each run trains a model per worker
  family.draw = [](Rng& rng) {
    Place place = draw_place(rng, {"dgx-a100", "tiny2", "aws-p4d"}, 0.5);
    Drawn& drawn = place.drawn;
    std::string devices;  // repeats allowed: two workers may share a GPU
    for (int w = draw_int(rng, 1, 3); w > 0; --w) devices += (devices.empty() ? "" : ",") + std::to_string(draw_int(rng, 0, place.visible - 1));
    drawn.args = {"--devices", devices};
    return drawn;
  };
  check_against_reference(family);
}
