// Lesson 04 — `.cuda(1)` is GPU 3 (article claim A2.6)
//
// Under CUDA_VISIBLE_DEVICES=2,3,4,5 this process sees four GPUs, renumbered 0..3 in
// list order. Put the model and a batch on "GPU 1" as the process numbers it, and watch
// which physical GPU (nvidia-smi's number) ends up holding the memory.
#include <torch/torch.h>

#include "gpulab/lesson.h"

int main(int argc, char** argv) {
  return gpulab::run_lesson("04", argc, argv, [](gpulab::Lesson& lesson) {
    torch::manual_seed(0);
    lesson.fact("device_count", static_cast<std::int64_t>(torch::cuda::device_count()));

    // TODO: choose the second GPU this process can see (the article's `.cuda(1)`).
    const torch::Device device(torch::kCPU);

    torch::nn::Linear model(/*in_features=*/1024, /*out_features=*/1024);
    model->to(device);
    lesson.observe("after model.to(device)", gpulab::tensors_of(*model));

    const auto batch = torch::randn({64, 1024}, device);
    const auto output = model(batch);
    lesson.observe("after forward", {{"batch", batch}, {"output", output}});
  });
}
