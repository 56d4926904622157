// Lesson 20 — After a helper borrows another GPU, where does the next batch land?
//
// A trainer runs on the GPU --device names (in a launched job, LOCAL_RANK's). Between two
// steps it evaluates the model on a spare GPU (--spare), so that the evaluation does not
// crowd the training GPU. First a memory probe reads how much PyTorch already holds on the
// spare GPU; then the evaluation, library code written for "the current GPU", runs there.
// An evaluation that fails (out of memory on the spare GPU) is logged, and training goes on.
#include <cstdint>

#include <torch/torch.h>

#include "gpulab/cuda.h"
#include "gpulab/lesson.h"

constexpr std::int64_t kFeatures = 1024;
constexpr std::int64_t kBatch = 512;

torch::Device cuda(int index) { return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index)); }

// The evaluation, as a library ships it: written for "the current GPU" (index-less
// torch::kCUDA). Leave it as it is. It records the device it ran on.
float evaluate(gpulab::Lesson& lesson, const torch::Tensor& weight, std::int64_t rows) {
  const torch::NoGradGuard no_grad;
  const auto w = weight.to(torch::kCUDA);  // a copy of the weight on the current GPU
  const auto batch = torch::randn({rows, kFeatures}, torch::kCUDA);
  const auto score = torch::matmul(batch, w.t()).pow(2).mean();
  lesson.fact("current_device_during_evaluation", gpulab::cuda::current_device());
  lesson.observe("during the evaluation", {{"evaluation batch", batch}});
  return score.item<float>();
}

// The memory probe, as `with torch.cuda.device(i): torch.cuda.memory_reserved()` reads it:
// bytes PyTorch's allocator holds on GPU `device`.
// STRETCH: the README's Stretch is about this probe (read it after your first run: what it
//          asks would answer a prediction).
std::int64_t reserved_on(int device) {
  const c10::DeviceGuard guard(cuda(device));
  return static_cast<std::int64_t>(gpulab::cuda::memory_reserved());  // the current device's
}

// The helper: evaluate on the spare GPU.
float evaluate_on_spare(gpulab::Lesson& lesson, const torch::Tensor& weight, int spare, std::int64_t rows) {
  // TODO: the evaluation must run on the spare GPU (its tensors there, and its current
  //       device), and everything the trainer does after this helper, even when the
  //       evaluation fails, must stay on the trainer's GPU, with no context on any GPU but
  //       these two.
  gpulab::cuda::set_device(spare);
  return evaluate(lesson, weight, rows);
}

int main(int argc, char** argv) {
  return gpulab::run_lesson("20", argc, argv, [](gpulab::Lesson& lesson) {
    const int device = lesson.int_list("--device", {0}).at(0);  // this process's GPU
    const int spare = lesson.int_list("--spare", {1}).at(0);    // the GPU the evaluation borrows
    const std::int64_t rows = lesson.int_list("--eval-rows", {256}).at(0);

    gpulab::cuda::set_device(device);
    torch::nn::Linear model(kFeatures, kFeatures);
    model->to(torch::kCUDA);
    const auto first_batch = torch::randn({kBatch, kFeatures}).to(torch::kCUDA);
    model->forward(first_batch).pow(2).mean().backward();
    lesson.observe("after the first step", {{"weight", model->weight}, {"batch", first_batch}});

    lesson.fact("reserved_on_spare_before", reserved_on(spare));
    lesson.observe("after the memory probe");

    lesson.attempt("evaluation", [&] {
      lesson.say("evaluation score " + std::to_string(evaluate_on_spare(lesson, model->weight, spare, rows)));
    });
    lesson.fact("current_device_after_evaluation", gpulab::cuda::current_device());

    const auto next_batch = torch::randn({kBatch, kFeatures}).to(torch::kCUDA);
    lesson.observe("after the evaluation", {{"next batch", next_batch}, {"weight", model->weight}});
    lesson.attempt("next step", [&] { model->forward(next_batch).pow(2).mean().backward(); });

    lesson.fact("reserved_on_spare_after", reserved_on(spare));
    lesson.observe("at the end");
  });
}
