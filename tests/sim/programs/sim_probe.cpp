// sim-probe: a tiny CUDA program for tests that need their own process (the simulated
// driver reads the environment once per process). Runs the steps given as arguments, in
// order, and prints one JSON array with a result per step:
//   count                 torch::cuda::device_count() and is_available()
//   physical              the physical GPU behind every visible CUDA index
//   ones:<device>         creates torch::ones({2}) on <device>; its device and physical GPU
//   props:<index>         gpulab::cuda::get_device_properties(index): uuid and PCI location
//   train:<device>        one forward and backward pass of an MSE loss on <device>
//   setenv:<NAME>=<VALUE> sets an environment variable in this process
//   fork:<step>[+<step>]  runs the steps in a child made by fork(), which then also lists where
//                         nvidia-smi shows its own pid and ends with exit(0); the last one's result
//   smi                   this process's pid, and every process nvidia-smi lists per physical GPU
// A step that throws records {"error": message} and the next step runs.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "gpulab/cuda.h"
#include "gpulab/observe.h"

namespace {

nlohmann::json run_step(const std::string& step);

nlohmann::json step_result(const std::string& step) {
  try {
    return run_step(step);
  } catch (const c10::Error& e) {
    return {{"error", e.what_without_backtrace()}};
  } catch (const std::exception& e) {
    return {{"error", e.what()}};
  }
}

// The physical GPUs whose process table lists `pid`.
nlohmann::json listed_on(int pid) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const gpulab::GpuView& gpu : gpulab::make_observer()->gpus())
    for (const gpulab::ProcessOnGpu& process : gpu.processes)
      if (process.pid == pid) gpus.push_back(gpu.physical_index);
  return gpus;
}

// Runs `step` in a forked child that reports through a pipe and ends with exit(0): its
// exit handlers run, as a worker's that returns from main would.
nlohmann::json forked(const std::string& step) {
  int fds[2];
  if (pipe(fds) != 0) return {{"error", "sim-probe: pipe failed"}};
  std::cout.flush();
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    nlohmann::json result;
    std::size_t from = 0;
    for (std::size_t plus = step.find('+'); ; plus = step.find('+', from)) {
      result = step_result(step.substr(from, plus == std::string::npos ? std::string::npos : plus - from));
      if (plus == std::string::npos) break;
      from = plus + 1;
    }
    result["listed_on"] = listed_on(static_cast<int>(getpid()));
    const std::string text = result.dump();
    for (std::size_t done = 0; done < text.size();) {
      const ssize_t n = write(fds[1], text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    close(fds[1]);
    std::exit(0);
  }
  close(fds[1]);
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return {{"child", text.empty() ? nlohmann::json() : nlohmann::json::parse(text)},
          {"child_pid", static_cast<int>(pid)},
          {"child_exit", WIFEXITED(status) ? WEXITSTATUS(status) : -1}};
}

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
  if (verb == "fork") return forked(arg);
  if (verb == "smi") {
    nlohmann::json gpus = nlohmann::json::object();
    for (const gpulab::GpuView& gpu : gpulab::make_observer()->gpus())
      for (const gpulab::ProcessOnGpu& process : gpu.processes)
        gpus[std::to_string(gpu.physical_index)].push_back({{"pid", process.pid}, {"bytes", process.used_bytes}});
    return {{"pid", static_cast<int>(getpid())}, {"gpus", gpus}};
  }
  return {{"error", "sim-probe: unknown step '" + step + "'"}};
}

}  // namespace

int main(int argc, char** argv) {
  nlohmann::json results = nlohmann::json::array();
  for (int i = 1; i < argc; ++i) {
    nlohmann::json result = step_result(argv[i]);
    result["step"] = argv[i];
    results.push_back(result);
  }
  std::cout << results.dump() << '\n';
  return 0;
}
