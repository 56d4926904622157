// context-hold WHAT DEVICE: a plain LibTorch program — it never calls gpulab — that does one
// thing with a CUDA device, prints "devices N" (torch::cuda::device_count()) and "ready", and
// holds on until its standard input closes, so that a test can look at its contexts with
// `gpulab smi --json`, as one would with nvidia-smi:
//   guard       enters c10::DeviceGuard for DEVICE and holds inside it
//   guard-exit  enters c10::DeviceGuard for DEVICE, leaves it, then holds
//   randn       torch::randn({1}, DEVICE) on the main thread, then holds the tensor
// An error is printed as "error: <message>" on one line (exit code 3).
#include <torch/torch.h>

#include <iostream>
#include <string>

namespace {
void hold() {
  std::cout << "devices " << static_cast<int>(torch::cuda::device_count()) << "\nready" << std::endl;
  for (std::string line; std::getline(std::cin, line);) {
  }
}
}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc == 3 ? argv[1] : "";
  if (what != "guard" && what != "guard-exit" && what != "randn") {
    std::cerr << "usage: context-hold guard|guard-exit|randn DEVICE\n";
    return 2;
  }
  try {
    const torch::Device device(argv[2]);
    if (what == "guard") {
      const c10::DeviceGuard guard(device);
      hold();
    } else if (what == "guard-exit") {
      { const c10::DeviceGuard guard(device); }
      hold();
    } else {
      const torch::Tensor tensor = torch::randn({1}, device);
      hold();
    }
  } catch (const c10::Error& error) {
    std::cout << "error: " << error.what_without_backtrace() << std::endl;
    return 3;
  }
  return 0;
}
