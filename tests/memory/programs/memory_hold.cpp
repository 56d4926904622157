// memory-hold DEVICE MIB: a plain LibTorch program — it never calls gpulab — that puts MIB
// MiB on DEVICE (e.g. cuda:1), prints "ready" and holds the memory until its standard
// input closes or it is killed. When the memory does not fit it prints "out of memory: "
// and PyTorch's message on one line, and exits with code 3. The tensor is never written,
// so a huge one costs the host nothing (the simulated GPU backs memory lazily).
#include <torch/torch.h>

#include <cstdint>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: memory-hold DEVICE MIB\n";
    return 2;
  }
  const torch::Device device(argv[1]);
  const std::int64_t bytes = std::stoll(argv[2]) * 1024 * 1024;

  torch::Tensor held;
  try {
    held = torch::empty({bytes}, torch::TensorOptions().dtype(torch::kUInt8).device(device));
  } catch (const c10::OutOfMemoryError& error) {
    std::cout << "out of memory: " << error.what_without_backtrace() << std::endl;
    return 3;
  }
  std::cout << "ready" << std::endl;

  for (std::string line; std::getline(std::cin, line);) {
  }
  return 0;
}
