// Lesson 18 — Which tensor is on the wrong GPU?
//
// The model goes to a GPU chosen at run time (--device, cuda:1 by default), as a launcher
// or a config file chooses it. The training step was written "for the GPU": its batch and
// target go to torch::kCUDA, and the loss mask is made where tensors are made by default.
// Read the error the step raises, find the tensor it names, and make the step run where
// the model is.
#include <string>

#include <torch/torch.h>

#include "gpulab/lesson.h"

constexpr int kBatch = 32;
constexpr int kFeatures = 64;
constexpr int kOutputs = 8;
constexpr int kSteps = 3;

int main(int argc, char** argv) {
  return gpulab::run_lesson("18", argc, argv, [](gpulab::Lesson& lesson) {
    torch::manual_seed(0);
    const torch::Device device(lesson.option("--device", "cuda:1"));  // chosen at run time
    torch::nn::Linear model(kFeatures, kOutputs);
    model->to(device);
    torch::optim::SGD optimizer(model->parameters(), /*lr=*/0.1);
    lesson.say("the model is on " + model->weight.device().str());

    // Every tensor of the step goes where the model's parameters are: the code names no
    // device of its own, so it follows the model to any GPU, or to the CPU.
    const torch::Device here = model->weight.device();
    const auto batch = torch::randn({kBatch, kFeatures}).to(here);
    const auto target = torch::randn({kBatch, kOutputs}).to(here);
    const auto mask = torch::ones({kBatch, kOutputs}, here);  // which outputs the loss counts
    lesson.observe("data ready", {{"batch", batch}, {"target", target}, {"mask", mask}});

    torch::Tensor loss;
    lesson.attempt("training step", [&] {
      for (int step = 0; step < kSteps; ++step) {
        optimizer.zero_grad();
        loss = ((model(batch) - target).pow(2) * mask).mean();
        loss.backward();
        optimizer.step();
      }
    });
    lesson.observe("after training", {{"weight", model->weight}, {"batch", batch}, {"loss", loss}});
  });
}
