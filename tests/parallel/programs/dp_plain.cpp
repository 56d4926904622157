// dp-plain: a plain LibTorch program that trains with gpulab::data_parallel — the model on
// cuda:1, devices {cuda:1, cuda:3} — prints "ready" and holds its memory until its standard
// input closes. Run it under CUDA_VISIBLE_DEVICES=2,3,4,5 and nvidia-smi (`gpulab smi`)
// shows it on physical GPUs 3 and 5 only.
#include <torch/torch.h>

#include <iostream>
#include <string>

#include "gpulab/data_parallel.h"

int main() {
  torch::manual_seed(0);
  const torch::Device primary("cuda:1");
  torch::nn::Linear model(/*in_features=*/256, /*out_features=*/64);
  model->to(primary);

  const auto batch = torch::randn({32, 256});
  const auto output = gpulab::data_parallel(model, batch, std::vector<torch::Device>{primary, torch::Device("cuda:3")});
  output.sum().backward();
  std::cout << "output on " << output.device() << "; ready" << std::endl;

  for (std::string line; std::getline(std::cin, line);) {
  }
  return 0;
}
