// DataParallel's rules about devices and its messages, from torch/nn/parallel/data_parallel.py:
// defaults and valid ids (__init__), the placement check (forward) and the balance check
// (_check_balance). Messages are PyTorch's, verbatim, where PyTorch has one.
#include <algorithm>
#include <utility>

#include <c10/util/Exception.h>
#include <torch/cuda.h>
#include <torch/nn/module.h>

#include "gpulab/cuda.h"
#include "gpulab/data_parallel.h"

namespace gpulab::parallel {
namespace {

c10::Device cuda(int index) { return {c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(index)}; }

int visible_gpus() { return static_cast<int>(torch::cuda::device_count()); }

// Python's _get_device_index(device, optional=True) for a torch.device: CUDA devices only.
int cuda_index(const c10::Device& device) {
  TORCH_CHECK_VALUE(device.is_cuda(), "Expected a cuda device, but got: ", device.str());
  return device.has_index() ? device.index() : 0;
}

// PyTorch asserts "Invalid device id" when it reads an id's properties; say which and why.
void check_visible(int id, int count, const char* what) {
  TORCH_CHECK_INDEX(id >= 0 && id < count, "Invalid device id ", id, " in ", what, ": DataParallel's ids are CUDA indices ",
                    "of this process, which sees ", count, " GPU(s)",
                    count > 0 ? " (0 to " + std::to_string(count - 1) + ")" : std::string(),
                    "; CUDA_VISIBLE_DEVICES decides which physical GPUs those are");
}

ParallelPlan validated(std::vector<int> ids, std::optional<int> output_device, std::int64_t dim) {
  const int count = visible_gpus();
  if (ids.empty())
    for (int i = 0; i < count; ++i) ids.push_back(i);
  for (int id : ids) check_visible(id, count, "device_ids");
  const int output = output_device.value_or(ids.front());
  if (output != -1) check_visible(output, count, "output_device");
  return {std::move(ids), output, dim};
}

}  // namespace

ParallelPlan make_plan(const std::vector<int>& device_ids, std::optional<int> output_device, std::int64_t dim) {
  // Python: with no CUDA device type available the module runs as it is.
  if (visible_gpus() == 0) return {{}, -1, dim};
  return validated(device_ids, output_device, dim);
}

ParallelPlan make_plan(const std::optional<std::vector<c10::Device>>& devices,
                       const std::optional<c10::Device>& output_device, std::int64_t dim) {
  TORCH_CHECK(visible_gpus() > 0, "device type could not be determined");
  std::vector<int> ids;
  if (devices) {
    TORCH_CHECK_VALUE(!devices->empty(), "data_parallel: devices is empty (omit it to use every visible GPU)");
    for (const c10::Device& device : *devices) ids.push_back(cuda_index(device));
  }
  std::optional<int> output;
  if (output_device) output = output_device->is_cpu() ? -1 : cuda_index(*output_device);
  return validated(std::move(ids), output, dim);
}

std::string placement_message(int primary, const c10::Device& found) {
  return "module must have its parameters and buffers on device " + cuda(primary).str() +
         " (device_ids[0]) but found one of them on device: " + found.str();
}

void check_placement(const torch::nn::Module& module, int primary) {
  const c10::Device expected = cuda(primary);
  for (const at::Tensor& tensor : module.parameters())
    TORCH_CHECK(tensor.device() == expected, placement_message(primary, tensor.device()));
  for (const at::Tensor& tensor : module.buffers())
    TORCH_CHECK(tensor.device() == expected, placement_message(primary, tensor.device()));
}

std::string imbalance_message(int smaller, int larger) {
  // Python's triple-quoted string: a leading newline, each line indented four spaces.
  return "\n    There is an imbalance between your GPUs. You may want to exclude GPU " + std::to_string(smaller) +
         " which\n    has less than 75% of the memory or cores of GPU " + std::to_string(larger) +
         ". You can do so by setting\n    the device_ids argument to DataParallel, or by setting the "
         "CUDA_VISIBLE_DEVICES\n    environment variable.";
}

std::optional<std::string> imbalance_warning(const std::vector<int>& device_ids) {
  std::vector<gpulab::cuda::DeviceProperties> properties;
  for (int id : device_ids) properties.push_back(gpulab::cuda::get_device_properties(id));
  if (properties.size() < 2) return std::nullopt;
  // Python's min()/max() over enumerate(values): the first position of the extreme value.
  const auto check = [&](auto value) -> std::optional<std::string> {
    std::size_t min_pos = 0, max_pos = 0;
    for (std::size_t i = 1; i < properties.size(); ++i) {
      if (value(properties[i]) < value(properties[min_pos])) min_pos = i;
      if (value(properties[i]) > value(properties[max_pos])) max_pos = i;
    }
    if (static_cast<double>(value(properties[min_pos])) / static_cast<double>(value(properties[max_pos])) < 0.75)
      return imbalance_message(device_ids[min_pos], device_ids[max_pos]);
    return std::nullopt;
  };
  if (auto warning = check([](const auto& p) { return p.total_memory; })) return warning;
  return check([](const auto& p) { return p.multi_processor_count; });
}

}  // namespace gpulab::parallel
