// Lesson 06 — device strings: "cuda:1,2" is not two GPUs (article claims A2.2, A2.7)
//
// A device is one GPU. Today LibTorch rejects every string below. PyTorch <= 1.5 read the
// index only up to its first non-digit, so the article's "cuda:2,1" silently meant cuda:2,
// which under CUDA_VISIBLE_DEVICES=2,3,4,5 is physical GPU 4: what the article saw.
#include <string>
#include <vector>

#include <torch/torch.h>

#include "gpulab/lesson.h"

// Strings from the article and its readers' attempts to name several GPUs at once.
const std::vector<std::string> kDeviceStrings = {"cuda:1,2", "cuda:2,1", "cuda:01", "cuda:-1", ""};
// The article's two multi-GPU strings, replayed with the old parser.
const std::vector<std::string> kArticleStrings = {"cuda:1,2", "cuda:2,1"};

// How PyTorch <= 1.5 turned a device string into a device (c10/core/Device.cpp then).
torch::Device parse_like_pytorch_1_5(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) return torch::Device(text);
  const torch::DeviceType type = torch::Device(text.substr(0, colon)).type();
  // TODO: add the index after ':', read as PyTorch <= 1.5 read it: with std::stoi, which stops at the first non-digit.
  return torch::Device(type);
}

int main(int argc, char** argv) {
  return gpulab::run_lesson("06", argc, argv, [](gpulab::Lesson& lesson) {
    lesson.fact("device_count", static_cast<std::int64_t>(torch::cuda::device_count()));

    // Today: every one of these strings raises.
    for (const auto& text : kDeviceStrings)
      lesson.attempt("torch::Device(\"" + text + "\")", [&] { (void)torch::Device(text); });

    // PyTorch <= 1.5: the same strings named one GPU each, without a word of warning.
    for (const auto& text : kArticleStrings)
      lesson.attempt("PyTorch 1.5 parse of \"" + text + "\"", [&] {
        const torch::Device device = parse_like_pytorch_1_5(text);
        lesson.observe("model.cuda(\"" + text + "\") in PyTorch 1.5",
                       {{"weight", torch::ones({1024, 1024}, device)}});
      });
  });
}
