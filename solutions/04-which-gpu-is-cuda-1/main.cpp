// Lesson 04 — Which GPU is cuda:1? (article claim A2.6)
//
// The article runs under CUDA_VISIBLE_DEVICES=2,3,4,5 and puts everything on `.cuda(1)`;
// nvidia-smi then shows GPU 3 busy. Turn the question round: given nvidia-smi's number of a
// GPU (--gpu N, the article's 3 by default), put the model and a batch on that GPU, whatever
// CUDA_VISIBLE_DEVICES lists.
#include <stdexcept>
#include <string>

#include <torch/torch.h>

#include "gpulab/cuda.h"
#include "gpulab/lesson.h"
#include "gpulab/observe.h"

int main(int argc, char** argv) {
  return gpulab::run_lesson("04", argc, argv, [](gpulab::Lesson& lesson) {
    torch::manual_seed(0);
    const int gpu = std::stoi(lesson.option("--gpu", "3"));  // nvidia-smi's number
    const auto count = static_cast<int>(torch::cuda::device_count());
    lesson.fact("device_count", static_cast<std::int64_t>(count));

    // CUDA indices count the visible GPUs in the list's order, so search them: the GPU's
    // UUID is the name nvidia-smi and CUDA share, whatever the list holds (indices or
    // UUIDs) and whatever order CUDA counts in.
    const std::string uuid = gpulab::make_observer()->gpus().at(static_cast<std::size_t>(gpu)).uuid;
    int index = -1;
    for (int i = 0; i < count && index < 0; ++i)
      if (gpulab::cuda::get_device_properties(i).uuid == uuid) index = i;
    if (index < 0)
      throw std::runtime_error("nvidia-smi's GPU " + std::to_string(gpu) +
                               " is not visible to this process: check CUDA_VISIBLE_DEVICES");
    lesson.say("nvidia-smi's GPU " + std::to_string(gpu) + " is cuda:" + std::to_string(index) + " here.");
    const torch::Device device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));

    torch::nn::Linear model(/*in_features=*/1024, /*out_features=*/1024);
    model->to(device);
    lesson.observe("after model.to(device)", gpulab::tensors_of(*model));

    const auto batch = torch::randn({64, 1024}, device);
    const auto output = model(batch);
    lesson.observe("after forward", {{"batch", batch}, {"output", output}});
  });
}
