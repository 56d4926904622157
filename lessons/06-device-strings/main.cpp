// Lesson 06 — Does "cuda:1,2" name two GPUs? (article claims A2.2, A2.7)
//
// What does today's LibTorch make of the strings in kDeviceStrings, and what did PyTorch <= 1.5
// make of them? (The article's model.cuda('cuda:2,1') ran on one GPU.)
// This program replays the article's strings (or the device strings given as arguments) the
// way PyTorch 1.5 read them, and puts a model's weight where PyTorch 1.5 would have put it.
#include <cstddef>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "gpulab/lesson.h"

// Strings from the article and its readers' attempts to name several GPUs at once.
const std::vector<std::string> kDeviceStrings = {"cuda:1,2", "cuda:2,1", "cuda:01", "cuda:-1", ""};
// The article's two multi-GPU strings, replayed with the old parser unless arguments give others.
const std::vector<std::string> kArticleStrings = {"cuda:1,2", "cuda:2,1"};

// The device PyTorch <= 1.5 made of a device string "<type>:<index text>" (its
// c10/core/Device.cpp, before its parser changed, in about 1.6).
torch::Device parse_like_pytorch_1_5(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) return torch::Device(text);
  const torch::DeviceType type = torch::Device(text.substr(0, colon)).type();
  // TODO: return the device PyTorch 1.5 made of `text`, so that the weight lands on the GPU
  //       model.cuda(text) used then — for any string given, with any number of digits.
  //       (The article saw model.cuda('cuda:2,1') run on physical GPU 4 under
  //       CUDA_VISIBLE_DEVICES=2,3,4,5.)
  return torch::Device(type);
}

// STRETCH: the GPUs the article's author meant by "cuda:1,2": one device per listed index.
//          (gpulab::split("1,2") gives {"1", "2"}.)
std::vector<torch::Device> devices_meant(const std::string& text) {
  (void)text;
  return {};
}

int main(int argc, char** argv) {
  return gpulab::run_lesson("06", argc, argv, [](gpulab::Lesson& lesson) {
    lesson.fact("device_count", static_cast<std::int64_t>(torch::cuda::device_count()));

    // Today: each of these strings, through today's parser.
    for (const auto& text : kDeviceStrings)
      lesson.attempt("torch::Device(\"" + text + "\")", [&] { (void)torch::Device(text); });

    // PyTorch <= 1.5: the strings replayed the way its parser read them.
    // `./gpulab run 06 -- cuda:3,1 cuda:10` replays other strings.
    const std::vector<std::string> replayed = lesson.args().empty() ? kArticleStrings : lesson.args();
    for (const auto& text : replayed) {
      lesson.attempt("PyTorch 1.5 parse of \"" + text + "\"", [&] {
        const torch::Device device = parse_like_pytorch_1_5(text);
        lesson.observe("model.cuda(\"" + text + "\") in PyTorch 1.5", {{"weight", torch::ones({1024, 1024}, device)}});
      });
      lesson.attempt("the GPUs meant by \"" + text + "\"", [&] {
        std::vector<gpulab::NamedTensor> replicas;
        for (const auto& device : devices_meant(text))
          replicas.emplace_back(device.str(), torch::ones({1024, 1024}, device));
        lesson.observe("one replica per GPU meant by \"" + text + "\"", replicas);
      });
    }
  });
}
