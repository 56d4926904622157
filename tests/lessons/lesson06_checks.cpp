// Lesson 06: multi-GPU device strings are rejected today; PyTorch <= 1.5 read the index with
// std::stoi — every leading digit, up to the first non-digit — so "cuda:2,1" meant cuda:2 =
// physical GPU 4 under CUDA_VISIBLE_DEVICES=2,3,4,5 (claims A2.2, A2.7). Scenarios replay the
// article's strings and strings given as arguments (multi-digit indices, leading zeros,
// trailing text) under several CUDA_VISIBLE_DEVICES lists; the checks look where each weight
// landed, or that CUDA refused an index this process cannot see.
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "expect.h"
#include "generated.h"
#include "gpu_requirements.h"
#include "lesson_run.h"

using namespace gpulab::test;

namespace {
// c10::Device's messages (c10/core/Device.cpp): the grammar ([a-zA-Z_]+)(?::([1-9]\d*|0))?
// rejects the whole string, quoted; an empty string has its own message.
std::string expected_message(const std::string& text) {
  if (text.empty()) return "Device string must not be empty";
  return "Invalid device string: '" + text + "'";
}

// PyTorch <= 1.5's reading of "cuda:<digits><anything>": every leading digit (std::stoi).
int legacy_index(const std::string& text) {
  const auto digits = text.substr(text.find(':') + 1);
  return std::stoi(digits.substr(0, digits.find_first_not_of("0123456789")));
}

// The errors a label recorded, as a learner reads them: "no error" or "the error '...'".
std::string raised(const std::vector<std::string>& messages) {
  if (messages.empty()) return "no error";
  std::string text = messages.size() == 1 ? "the error " : std::to_string(messages.size()) + " errors: ";
  for (std::size_t i = 0; i < messages.size(); ++i) text += (i == 0 ? "\"" : ", \"") + messages[i] + "\"";
  return text;
}

const nlohmann::json* observation_or_null(const LessonRun& run, const std::string& label) {
  for (const auto& o : run.report.at("observations"))
    if (o.at("label") == label) return &o;
  return nullptr;
}

std::string visible_text(const std::optional<std::string>& visible) {
  return visible ? "CUDA_VISIBLE_DEVICES=" + *visible : std::string("CUDA_VISIBLE_DEVICES unset");
}

// Replays `strings` (the article's when `args` is false) under `visible` and checks each
// weight is where PyTorch 1.5 put it, or that CUDA refused an index it cannot see.
void check_replay(const std::optional<std::string>& visible, const std::vector<std::string>& strings, bool args) {
  const Env env{{"CUDA_VISIBLE_DEVICES", visible}};
  GPULAB_REQUIRE_GPUS(gpus_needed(env), env);
  const auto run = run_scenario("06", env, args ? strings : std::vector<std::string>{});
  const auto physical = visible_physical(visible);
  for (const auto& text : strings) {
    const int index = legacy_index(text);
    const std::string device = "cuda:" + std::to_string(index);
    const std::string label = "model.cuda(\"" + text + "\") in PyTorch 1.5";
    const auto errors = run.errors("PyTorch 1.5 parse of \"" + text + "\"");
    const std::string under = visible_text(visible);
    const std::string when = " (" + under + ")";
    const auto* seen = observation_or_null(run, label);
    if (index >= static_cast<int>(physical.size())) {
      // PyTorch 1.5 read every digit: an index this process cannot see, and CUDA says so.
      std::string observed = "it raised " + raised(errors);
      if (seen != nullptr)
        for (const auto& t : seen->at("tensors"))
          observed += ", and the weight is on " + t.at("device").get<std::string>() + " (" +
                      placement(t.at("physical_index").is_null() ? -1 : t.at("physical_index").get<int>()) + ")";
      const bool refused =
          errors.size() == 1 && errors[0].find("invalid device ordinal") != std::string::npos && seen == nullptr;
      expect_that(refused,
                  label + " fails with \"CUDA error: invalid device ordinal\": PyTorch 1.5 read " + device +
                      ", and this process sees " + std::to_string(physical.size()) + " GPUs" + when,
                  observed);
      continue;
    }
    expect_that(errors.empty(), "PyTorch 1.5's parse accepts \"" + text + "\"" + when, "it raised " + raised(errors));
    if (seen == nullptr) continue;  // reported just above
    const std::string observed_device = run.device_of(label, "weight");
    expect_that(observed_device == device, "after " + label + ", weight on " + device + when,
                "weight on " + observed_device);
    const int gpu = physical.at(static_cast<std::size_t>(index));
    const int observed_gpu = run.physical_of(label, "weight");
    expect_that(observed_gpu == gpu, "after " + label + ", weight " + placement(gpu) + " (" + device + ", " + under + ")",
                "weight " + placement(observed_gpu));
  }
}
}  // namespace

TEST_CASE("device strings that name several GPUs, a padded, a negative or no index raise LibTorch's message",
          "[lesson06]") {
  const Env env{{"CUDA_VISIBLE_DEVICES", "2,3,4,5"}};
  GPULAB_REQUIRE_GPUS(gpus_needed(env), env);
  const auto run = run_scenario("06", env);
  for (const std::string text : {"cuda:1,2", "cuda:2,1", "cuda:01", "cuda:-1", ""}) {
    const std::string call = "torch::Device(\"" + text + "\")";
    const auto errors = run.errors(call);
    expect_that(errors == std::vector<std::string>{expected_message(text)},
                call + " raises " + raised({expected_message(text)}), "it raised " + raised(errors));
  }
}

TEST_CASE("the article's strings under CUDA_VISIBLE_DEVICES=2,3,4,5: one GPU each, the index before the comma",
          "[lesson06]") {
  check_replay("2,3,4,5", {"cuda:1,2", "cuda:2,1"}, false);
  // What the article reported for model.cuda('cuda:2,1') under CUDA_VISIBLE_DEVICES=2,3,4,5,
  // on a machine of alike GPUs like the default node (real GPUs: the replay above).
  const Env env{{"CUDA_VISIBLE_DEVICES", "2,3,4,5"}};
  if (simulated(env) && !missing_gpus(gpus_needed(env), env)) {
    const auto run = run_scenario("06", env);
    const int observed_gpu = run.physical_of("model.cuda(\"cuda:2,1\") in PyTorch 1.5", "weight");
    expect_that(observed_gpu == 4,
                "weight on physical GPU 4, as the article reported for model.cuda('cuda:2,1') under"
                " CUDA_VISIBLE_DEVICES=2,3,4,5",
                "weight " + placement(observed_gpu));
  }
}

TEST_CASE("strings given as arguments, every GPU visible: cuda:10, cuda:007, cuda:08, cuda:3,1", "[lesson06]") {
  // cuda:08: a leading zero is no octal prefix to std::stoi, so PyTorch 1.5 read cuda:8.
  check_replay(std::nullopt, {"cuda:10", "cuda:007", "cuda:08", "cuda:3,1"}, true);
}

TEST_CASE("strings given as arguments under CUDA_VISIBLE_DEVICES=7,6,5,4,3,2,1,0: cuda:12, cuda:0,7, cuda:6gpu",
          "[lesson06]") {
  check_replay("7,6,5,4,3,2,1,0", {"cuda:12", "cuda:0,7", "cuda:6gpu"}, true);
}

TEST_CASE("stretch: what the article meant, one replica on each GPU the string lists", "[lesson06][stretch]") {
  const Env env{{"CUDA_VISIBLE_DEVICES", "2,3,4,5"}};
  GPULAB_REQUIRE_GPUS(gpus_needed(env), env);
  const auto run = run_scenario("06", env);
  const auto physical = visible_physical("2,3,4,5");
  for (const std::string text : {"cuda:1,2", "cuda:2,1"}) {
    const std::string label = "one replica per GPU meant by \"" + text + "\"";
    const auto errors = run.errors("the GPUs meant by \"" + text + "\"");
    require_that(errors.empty(), "\"" + text + "\" turned into devices with no error", "it raised " + raised(errors));
    const auto& tensors = run.observation(label).at("tensors");
    std::vector<int> indices;
    for (std::string::size_type start = text.find(':') + 1; start <= text.size();) {
      const auto comma = text.find(',', start);
      indices.push_back(std::stoi(text.substr(start, comma - start)));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    expect_that(tensors.size() == indices.size(),
                std::to_string(indices.size()) + " replicas for \"" + text + "\", one per GPU it lists",
                std::to_string(tensors.size()) + " replicas");
    for (int index : indices) {
      const std::string device = "cuda:" + std::to_string(index);
      const int gpu = physical.at(static_cast<std::size_t>(index));
      int observed = -2;
      for (const auto& t : tensors)
        if (t.at("name") == device) observed = t.at("physical_index").is_null() ? -1 : t.at("physical_index").get<int>();
      expect_that(observed == gpu,
                  "for \"" + text + "\", a replica on " + device + ", " + placement(gpu) +
                      " under CUDA_VISIBLE_DEVICES=2,3,4,5",
                  observed == -2 ? "no replica named " + device : "it is " + placement(observed));
    }
  }
}

// Generated: device strings as PyTorch 1.5 read them (leading zeros, several digits, a comma,
// trailing letters, no digit at all) under drawn lists; where each weight lands, or the
// error, as the reference. The stretch's family: the replicas of the GPUs a string meant.
namespace {
Family lesson06_family(bool stretch) {
  Family family;
  family.lesson = "06";
  family.what = stretch ? "the GPUs device strings with commas meant"
                        : "device strings with leading zeros, several digits, commas, trailing letters or no digit";
  family.labels = stretch ? std::vector<std::string>{"the GPUs meant by", "one replica per GPU meant by"}
                          : std::vector<std::string>{"PyTorch 1.5 parse of", "model.cuda("};
  family.draw = [stretch](Rng& rng) {
    Drawn drawn;
    drawn.env = {{"GPULAB_NODE", "dgx-a100"}};
    if (draw_int(rng, 0, 1) == 0) drawn.env.emplace_back("CUDA_VISIBLE_DEVICES", draw_visible_list(rng, "dgx-a100", ListKinds{}, 5));
    for (int s = draw_int(rng, 1, 3); s > 0; --s) {
      std::string text = "cuda:" + std::string(static_cast<std::size_t>(draw_int(rng, 0, 2)), '0') + std::to_string(draw_int(rng, 0, 12));
      if (stretch || draw_int(rng, 0, 2) == 0) text += "," + std::to_string(draw_int(rng, 0, 7));
      if (!stretch && draw_int(rng, 0, 4) == 0) text += draw_one(rng, {"gpu", "x", ":1"});
      if (!stretch && draw_int(rng, 0, 5) == 0) text = draw_one(rng, {"cuda:", "cuda:gpu", "cuda:,1"});
      drawn.args.push_back(text);
    }
    return drawn;
  };
  return family;
}
}  // namespace

TEST_CASE("generated scenarios: device strings of every shape", "[lesson06]") {
  check_against_reference(lesson06_family(/*stretch=*/false));
}

TEST_CASE("stretch: generated scenarios, the GPUs a string with commas meant", "[lesson06][stretch]") {
  check_against_reference(lesson06_family(/*stretch=*/true));
}
