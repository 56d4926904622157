// Lesson 12 — How do I choose the primary GPU without device_ids? (article claim A5.2)
//
// The article's advice for DataParallel: don't pass device_ids, and reorder the variable,
// e.g. CUDA_VISIBLE_DEVICES=2,1,3 makes physical GPU 2 the primary. Given physical GPUs
// (nvidia-smi's numbers), set the environment so that DataParallel uses exactly those,
// with the chosen one as its primary.
#include <cstdlib>
#include <string>

#include <torch/torch.h>

#include "gpulab/data_parallel.h"
#include "gpulab/lesson.h"

// Runs before this process's first CUDA call (lesson 03).
// TODO: after this function, DataParallel with device_ids omitted must use exactly the
//       physical GPUs `primary` and `others` (nvidia-smi's numbers), with physical GPU
//       `primary` as its primary — on any node, whatever the environment said before.
// STRETCH: `others` may repeat a GPU or name the primary again (--others 1,5,6,1): DataParallel
//          must still use each named GPU once, `primary` first.
void choose_primary(int primary, const std::vector<int>& others) {
  (void)primary;
  (void)others;
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
    model->to(torch::kCUDA);                 // the article's model.cuda()
    gpulab::DataParallel parallel(model);    // device_ids omitted
    const auto output = parallel.forward(torch::randn({/*batch=*/64, 1024}));
    output.pow(2).mean().backward();
    lesson.observe("after backward", {{"weight", model->weight}, {"output", output}});
  });
}
