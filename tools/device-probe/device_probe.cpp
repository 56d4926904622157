// device-probe: what CUDA does in this process, as JSON on stdout, one key per step:
//   visible    torch::cuda::device_count(), and for each CUDA index the physical GPU (UUID)
//   context    this process's memory on the GPU of cuda:0 after its first (4-byte)
//              allocation, less what the caching allocator reserved: the context size
//   oom        the error for an allocation larger than cuda:0's GPU
//   ordinal    the errors for the first CUDA index past the last one
//   properties what cudaGetDeviceProperties says of cuda:0 (real GPUs only)
//   profile    the software profile: the linked PyTorch and the CUDA runtime (major)
// and, each alone in a fresh process, the profile's context rules (docs/reference.md,
// "Profiles"), each answered with the physical GPUs where this process then has a context;
// D is the last CUDA index (1 on a two-GPU machine, 0 on one GPU):
//   rule_guard          only enters c10::DeviceGuard for cuda:D (and stays inside)
//   rule_guard_exit     enters and leaves it
//   rule_randn          torch::randn({1}, cuda:D) on the main thread
//   rule_set_device     gpulab::cuda::set_device(D) (torch.cuda.set_device)
//   rule_set_device0    set_device(0) on a fresh thread
// The same source runs on real GPUs (GPULAB_BACKEND=cuda) and on the simulated node, so
// tools/device-check.sh can compare the simulator's prediction with the hardware.
#include <cstdint>
#include <functional>
#include <iostream>
#include <string>
#include <thread>

#include <c10/util/Exception.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "gpulab/cuda.h"
#include "gpulab/observe.h"
#include "model/profile.h"
#include "backend/backend.h"

#if defined(GPULAB_BACKEND_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace {

using Json = nlohmann::json;

// The message as a user sees it: c10::Error without LibTorch's C++ backtrace.
Json error_of(const std::function<void()>& step) {
  try {
    step();
    return nullptr;
  } catch (const c10::Error& error) {
    return error.what_without_backtrace();
  } catch (const std::exception& error) {
    return error.what();
  }
}

const gpulab::GpuView& gpu(const std::vector<gpulab::GpuView>& gpus, int physical) {
  return gpus.at(static_cast<std::size_t>(physical));
}

Json visible(gpulab::Observer& observer) {
  const int count = static_cast<int>(torch::cuda::device_count());
  const auto gpus = observer.gpus();
  Json devices = Json::array();
  for (int index = 0; index < count; ++index) {
    const int physical = observer.physical_index(index);
    devices.push_back({{"cuda", index}, {"physical", physical}, {"uuid", gpu(gpus, physical).uuid}});
  }
  return {{"count", count}, {"available", torch::cuda::is_available()}, {"devices", devices}};
}

Json context(gpulab::Observer& observer) {
  const auto before = observer.gpus();  // no CUDA yet: device-level use without us
  const auto tensor = torch::empty({1}, torch::TensorOptions().dtype(torch::kFloat).device(torch::kCUDA, 0));
  const int physical = gpulab::physical_index_of(tensor);
  const auto after = observer.gpus();
  const std::uint64_t process = gpu(after, physical).this_process_bytes;
  const std::uint64_t reserved = gpulab::cuda::memory_reserved(0);
  return {{"physical", physical},
          {"process_bytes", process},
          {"reserved_bytes", reserved},
          {"context_bytes", process >= reserved ? Json(process - reserved) : Json(nullptr)},
          {"device_used_delta_bytes",
           static_cast<std::int64_t>(gpu(after, physical).used_bytes) -
               static_cast<std::int64_t>(gpu(before, physical).used_bytes)}};
}

Json oom(gpulab::Observer& observer) {
  const auto gpus = observer.gpus();
  const std::uint64_t total = gpu(gpus, observer.physical_index(0)).total_bytes;
  const auto bytes = static_cast<std::int64_t>(total + (std::uint64_t{1} << 30));  // 1 GiB more than the GPU has
  return {{"bytes", bytes}, {"message", error_of([&] {
             (void)torch::empty({bytes}, torch::TensorOptions().dtype(torch::kUInt8).device(torch::kCUDA, 0));
           })}};
}

Json ordinal() {
  const auto past = static_cast<c10::DeviceIndex>(torch::cuda::device_count());
  return {{"index", past},
          {"tensor", error_of([&] { (void)torch::ones({1}, torch::Device(torch::kCUDA, past)); })},
          {"set_device", error_of([&] { gpulab::cuda::set_device(past); })}};
}

Json properties() {
#if defined(GPULAB_BACKEND_CUDA)
  cudaDeviceProp p{};
  const cudaError_t status = cudaGetDeviceProperties(&p, 0);
  if (status != cudaSuccess) return {{"error", cudaGetErrorString(status)}};
  return {{"name", p.name},
          {"compute_capability", std::to_string(p.major) + "." + std::to_string(p.minor)},
          {"sm_count", p.multiProcessorCount},
          {"total_bytes", p.totalGlobalMem}};
#else
  return nullptr;
#endif
}

Json profile() {
  return gpulab::profile_to_json(gpulab::active_profile());
}

// The rule's device D and the physical GPUs where this process has a context now.
Json contexts_now(gpulab::Observer& observer, int device) {
  Json held = Json::array();
  for (const auto& g : observer.gpus())
    if (g.this_process_context) held.push_back(g.physical_index);
  return {{"device", device}, {"physical_of_device", observer.physical_index(device)}, {"contexts", held}};
}

Json rule(gpulab::Observer& observer, const std::string& name) {
  const int d = static_cast<int>(torch::cuda::device_count()) - 1;
  if (d < 0) return {{"error", "no CUDA device"}};
  const torch::Device device(torch::kCUDA, static_cast<c10::DeviceIndex>(d));
  if (name == "rule_guard") {
    const c10::DeviceGuard guard(device);
    return contexts_now(observer, d);
  }
  if (name == "rule_guard_exit") {
    { const c10::DeviceGuard guard(device); }
    return contexts_now(observer, d);
  }
  if (name == "rule_randn") {
    const auto tensor = torch::randn({1}, device);
    return contexts_now(observer, d);
  }
  if (name == "rule_set_device") {
    gpulab::cuda::set_device(d);
    return contexts_now(observer, d);
  }
  if (name == "rule_set_device0") {
    std::thread([] { gpulab::cuda::set_device(0); }).join();
    return contexts_now(observer, d);
  }
  return {{"error", "unknown step"}};
}

}  // namespace

int main(int argc, char** argv) {
  auto observer = gpulab::make_observer();
  Json out = Json::object();
  for (int i = 1; i < argc; ++i) {
    const std::string step = argv[i];
    try {
      if (step == "visible") out[step] = visible(*observer);
      else if (step == "context") out[step] = context(*observer);
      else if (step == "oom") out[step] = oom(*observer);
      else if (step == "ordinal") out[step] = ordinal();
      else if (step == "properties") out[step] = properties();
      else if (step == "profile") out[step] = profile();
      else if (step.rfind("rule_", 0) == 0) out[step] = rule(*observer, step);
      else out[step] = {{"error", "unknown step"}};
    } catch (const c10::Error& error) {
      out[step] = {{"error", error.what_without_backtrace()}};
    } catch (const std::exception& error) {
      out[step] = {{"error", error.what()}};
    }
  }
  std::cout << out.dump(2) << std::endl;
  return 0;
}
