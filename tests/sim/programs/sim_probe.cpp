// sim-probe: a tiny CUDA program for tests that need their own process (the simulated
// driver reads the environment once per process). Runs the steps given as arguments, in
// order, and prints one JSON array with a result per step:
//   count                 torch::cuda::device_count() and is_available()
//   physical              the physical GPU behind every visible CUDA index
//   ones:<device>         creates torch::ones({2}) on <device>; its device and physical GPU
//   props:<index>         gpulab::cuda::get_device_properties(index): uuid and PCI location
//   train:<device>        one forward and backward pass of an MSE loss on <device>
//   setenv:<NAME>=<VALUE> sets an environment variable in this process
// A step that throws records {"error": message} and the next step runs.
#include <cstdlib>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "gpulab/cuda.h"
#include "gpulab/observe.h"

namespace {

nlohmann::json run_step(const std::string& step) {
  const auto colon = step.find(':');
  const std::string verb = step.substr(0, colon);
  const std::string arg = colon == std::string::npos ? "" : step.substr(colon + 1);
  if (verb == "count")
    return {{"count", torch::cuda::device_count()}, {"available", torch::cuda::is_available()}};
  if (verb == "physical") {
    nlohmann::json physical = nlohmann::json::array();
    const auto count = static_cast<int>(torch::cuda::device_count());
    for (int index = 0; index < count; ++index)
      physical.push_back(gpulab::physical_index_of(torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index))));
    return {{"physical", physical}};
  }
  if (verb == "ones") {
    const auto tensor = torch::ones({2}, torch::Device(arg));
    return {{"device", tensor.device().str()}, {"physical", gpulab::physical_index_of(tensor)}};
  }
  if (verb == "props") {
    const auto props = gpulab::cuda::get_device_properties(std::stoi(arg));
    return {{"name", props.name}, {"uuid", props.uuid}, {"pci_domain_id", props.pci_domain_id},
            {"pci_bus_id", props.pci_bus_id}, {"pci_device_id", props.pci_device_id}};
  }
  if (verb == "train") {
    const torch::Device device(arg);
    torch::nn::Linear model(8, 2);
    model->to(device);
    const auto loss = torch::mse_loss(model(torch::randn({16, 8}, device)), torch::randn({16, 2}, device));
    loss.backward();
    return {{"device", loss.device().str()}, {"grad_device", model->weight.grad().device().str()}};
  }
  if (verb == "setenv") {
    const auto equals = arg.find('=');
    setenv(arg.substr(0, equals).c_str(), arg.substr(equals + 1).c_str(), /*overwrite=*/1);
    return nlohmann::json::object();
  }
  return {{"error", "sim-probe: unknown step '" + step + "'"}};
}

}  // namespace

int main(int argc, char** argv) {
  nlohmann::json results = nlohmann::json::array();
  for (int i = 1; i < argc; ++i) {
    nlohmann::json result;
    try {
      result = run_step(argv[i]);
    } catch (const c10::Error& e) {
      result = {{"error", e.what_without_backtrace()}};
    } catch (const std::exception& e) {
      result = {{"error", e.what()}};
    }
    result["step"] = argv[i];
    results.push_back(result);
  }
  std::cout << results.dump() << '\n';
  return 0;
}
