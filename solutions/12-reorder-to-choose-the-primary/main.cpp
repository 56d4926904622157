// Lesson 12 — How do I choose the primary GPU without device_ids? (article claim A5.2)
//
// With device_ids omitted DataParallel uses every visible GPU, and cuda:0 — the first GPU
// CUDA_VISIBLE_DEVICES lists — is its primary. The article's advice: reorder the variable,
// e.g. CUDA_VISIBLE_DEVICES=2,1,3 makes physical GPU 2 the primary. Given physical GPUs
// (nvidia-smi's numbers), set the environment so that DataParallel uses exactly those,
// with the chosen one as its primary.
#include <algorithm>
#include <cstdlib>
#include <string>

#include <torch/torch.h>

#include "gpulab/data_parallel.h"
#include "gpulab/lesson.h"

// Runs before this process's first CUDA call, while the environment still counts.
void choose_primary(int primary, const std::vector<int>& others) {
  // Integer entries count CUDA's order, which is nvidia-smi's only with PCI_BUS_ID.
  setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", /*overwrite=*/1);
  std::string list = std::to_string(primary);  // the first entry becomes cuda:0, the primary
  std::vector<int> listed = {primary};
  for (int gpu : others) {
    // The stretch: one repeated entry would make CUDA see no GPU at all.
    if (std::find(listed.begin(), listed.end(), gpu) != listed.end()) continue;
    listed.push_back(gpu);
    list += "," + std::to_string(gpu);
  }
  setenv("CUDA_VISIBLE_DEVICES", list.c_str(), /*overwrite=*/1);
}

int main(int argc, char** argv) {
  return gpulab::run_lesson("12", argc, argv, [](gpulab::Lesson& lesson) {
    // --primary 5 --others 1,6: physical GPUs as nvidia-smi numbers them. Without them the
    // program takes CUDA_VISIBLE_DEVICES as it finds it (the article's 2,1,3).
    const std::vector<int> primary = lesson.int_list("--primary");
    if (!primary.empty()) choose_primary(primary.front(), lesson.int_list("--others"));

    torch::manual_seed(0);
    lesson.fact("device_count", static_cast<std::int64_t>(torch::cuda::device_count()));
    torch::nn::Linear model(/*in_features=*/1024, /*out_features=*/1024);
    model->to(torch::kCUDA);                 // cuda:0
    gpulab::DataParallel parallel(model);    // device_ids omitted: every visible GPU
    const auto output = parallel.forward(torch::randn({/*batch=*/64, 1024}));
    output.pow(2).mean().backward();
    lesson.observe("after backward", {{"weight", model->weight}, {"output", output}});
  });
}
