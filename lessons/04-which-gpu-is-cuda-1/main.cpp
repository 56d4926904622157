// Lesson 04 — Which GPU is cuda:1? (article claim A2.6)
//
// The article runs under CUDA_VISIBLE_DEVICES=2,3,4,5 and puts everything on `.cuda(1)`;
// nvidia-smi then shows GPU 3 busy. Turn the question round: given nvidia-smi's number of a
// GPU (--gpu N, the article's 3 by default), put the model and a batch on that GPU, whatever
// CUDA_VISIBLE_DEVICES lists.
#include <string>

#include <torch/torch.h>

#include "gpulab/lesson.h"

int main(int argc, char** argv) {
  return gpulab::run_lesson("04", argc, argv, [](gpulab::Lesson& lesson) {
    torch::manual_seed(0);
    const int gpu = std::stoi(lesson.option("--gpu", "3"));  // nvidia-smi's number
    const auto count = static_cast<int>(torch::cuda::device_count());
    lesson.fact("device_count", static_cast<std::int64_t>(count));
    lesson.say("the work goes to nvidia-smi's GPU " + std::to_string(gpu) + "; CUDA shows this process " +
               std::to_string(count) + " GPUs.");

    // TODO: nvidia-smi must show the model's weight and bias, the batch and the output on
    //       its GPU `gpu` (physical GPU 3 by default), and this process on no GPU the work
    //       does not need — under any CUDA_VISIBLE_DEVICES that lists that GPU; under one
    //       that does not, the program stops with an error rather than work on another GPU.
    //       The checks try several lists and several --gpu.
    const torch::Device device(torch::kCPU);

    torch::nn::Linear model(/*in_features=*/1024, /*out_features=*/1024);
    model->to(device);
    lesson.observe("after model.to(device)", gpulab::tensors_of(*model));

    const auto batch = torch::randn({64, 1024}, device);
    const auto output = model(batch);
    lesson.observe("after forward", {{"batch", batch}, {"output", output}});

    // STRETCH: make it work also when CUDA_VISIBLE_DEVICES names the GPUs by UUID (as
    //          nvidia-smi -L prints them), and on nodes of unlike GPUs
    //          (GPULAB_NODE=workstation-mixed, pascal-rig).
  });
}
