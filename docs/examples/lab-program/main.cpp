// A lab program that knows nothing of gpulab: it asks LibTorch for CUDA devices, puts a
// tensor on the last one and checks the arithmetic. Linked to gpulab::gpulab, it runs on
// the simulated node; try it under CUDA_VISIBLE_DEVICES=5,6 and watch `gpulab smi`.
#include <torch/torch.h>

#include <iostream>

int main() {
  if (!torch::cuda::is_available()) {
    std::cerr << "no CUDA device visible\n";
    return 1;
  }
  const auto count = static_cast<int>(torch::cuda::device_count());
  const torch::Device device(torch::kCUDA, count - 1);
  const auto x = torch::arange(1, 5, torch::TensorOptions(device).dtype(torch::kFloat));
  const float sum = (x * x).sum().item<float>();  // 1 + 4 + 9 + 16
  std::cout << count << " CUDA devices; computed on " << x.device() << ": " << sum << '\n';
  return sum == 30.0f ? 0 : 1;
}
