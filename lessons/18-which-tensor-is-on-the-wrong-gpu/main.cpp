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

    // TODO: the training step must run on the GPU the model was placed on: the batch, the
    //       target, the mask and the loss on that physical GPU, and this process holding no
    //       memory on any other GPU, whatever --device and CUDA_VISIBLE_DEVICES say.
    // STRETCH: with --device cpu the same program must train on the CPU, touching no GPU.
    const auto batch = torch::randn({kBatch, kFeatures}).to(torch::kCUDA);
    const auto target = torch::randn({kBatch, kOutputs}).to(torch::kCUDA);
    const auto mask = torch::ones({kBatch, kOutputs});  // which outputs the loss counts
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
