// Lesson 06: multi-GPU device strings are rejected today; PyTorch <= 1.5 cut them at the
// first non-digit, so "cuda:2,1" meant cuda:2 = physical GPU 4 (claims A2.2, A2.7).
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "expect.h"
#include "gpu_requirements.h"
#include "lesson_run.h"

using namespace gpulab::test;

namespace {
const std::string kVisible = "2,3,4,5";

// c10::Device's messages (c10/core/Device.cpp): the grammar ([a-zA-Z_]+)(?::([1-9]\d*|0))?
// rejects the whole string, quoted; an empty string has its own message.
std::string expected_message(const std::string& text) {
  if (text.empty()) return "Device string must not be empty";
  return "Invalid device string: '" + text + "'";
}

const Env kEnv = {{"CUDA_VISIBLE_DEVICES", kVisible}};

// The physical GPUs of kVisible, in CUDA index order. Entry i is the GPU CUDA numbers i with
// every GPU visible: physical GPU i on the default node, whose GPUs are alike.
std::vector<int> visible_physical() {
  const auto order = cuda_order();
  std::vector<int> physical;
  std::string::size_type start = 0;
  while (start <= kVisible.size()) {
    const auto comma = kVisible.find(',', start);
    physical.push_back(order.at(static_cast<std::size_t>(std::stoi(kVisible.substr(start, comma - start)))));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return physical;
}

// PyTorch <= 1.5's reading of "cuda:<digits><anything>": the leading digits.
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
}  // namespace

TEST_CASE("device strings that name several GPUs, a padded, a negative or no index raise LibTorch's message",
          "[lesson06]") {
  GPULAB_REQUIRE_GPUS(gpus_needed(kEnv), kEnv);
  const auto run = run_lesson("06", kEnv);
  for (const std::string text : {"cuda:1,2", "cuda:2,1", "cuda:01", "cuda:-1", ""}) {
    const std::string call = "torch::Device(\"" + text + "\")";
    const auto errors = run.errors(call);
    expect_that(errors == std::vector<std::string>{expected_message(text)},
                call + " raises " + raised({expected_message(text)}), "it raised " + raised(errors));
  }
}

TEST_CASE("under PyTorch 1.5's parse, the article's strings land on one GPU: the index before the comma",
          "[lesson06]") {
  GPULAB_REQUIRE_GPUS(gpus_needed(kEnv), kEnv);
  const auto run = run_lesson("06", kEnv);
  const auto physical = visible_physical();
  for (const std::string text : {"cuda:1,2", "cuda:2,1"}) {
    const auto errors = run.errors("PyTorch 1.5 parse of \"" + text + "\"");
    expect_that(errors.empty(), "PyTorch 1.5's parse accepts \"" + text + "\"", "it raised " + raised(errors));
    const std::string label = "model.cuda(\"" + text + "\") in PyTorch 1.5";
    const int index = legacy_index(text);
    const std::string device = "cuda:" + std::to_string(index);
    const std::string observed_device = run.device_of(label, "weight");
    expect_that(observed_device == device,
                "after " + label + ", weight on " + device + " (the digits before the comma)",
                "weight on " + observed_device);
    const int gpu = physical.at(static_cast<std::size_t>(index));
    const int observed_gpu = run.physical_of(label, "weight");
    expect_that(observed_gpu == gpu,
                "after " + label + ", weight " + placement(gpu) + " (" + device +
                    " under CUDA_VISIBLE_DEVICES=" + kVisible + ")",
                "weight " + placement(observed_gpu));
  }
  // What the article reported for model.cuda('cuda:2,1') under CUDA_VISIBLE_DEVICES=2,3,4,5,
  // on a machine of alike GPUs like the default node (real GPUs: the loop above).
  if (simulated()) {
    const int observed_gpu = run.physical_of("model.cuda(\"cuda:2,1\") in PyTorch 1.5", "weight");
    expect_that(observed_gpu == 4,
                "weight on physical GPU 4, as the article reported for model.cuda('cuda:2,1') under"
                " CUDA_VISIBLE_DEVICES=2,3,4,5",
                "weight " + placement(observed_gpu));
  }
}
