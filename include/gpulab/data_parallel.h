// Python's nn.DataParallel for LibTorch, built on LibTorch primitives (docs/data-parallel.md).
//
// CPU-only LibTorch has no Scatter/Gather, and LibTorch's own
// torch::nn::parallel::data_parallel (CUDA builds only) skips the checks the article is about.
// These follow torch/nn/parallel/data_parallel.py and its helpers instead:
//   - device_ids defaults to every visible GPU, output_device to device_ids[0];
//   - forward first checks that the module lives on cuda:device_ids[0] and throws
//     PyTorch's exact message if not; the module form also warns, once, when one GPU has
//     under 75% of another's memory or SMs (PyTorch's exact text);
//   - scatter splits tensors with chunk() (fewer chunks than devices is possible), tuples
//     and vectors element by element; anything else goes to every replica as it is;
//   - replicas only on the devices that got a chunk; the one on device_ids[0] is the module
//     itself, so it shares the module's storage, and the others' gradients flow back to it;
//   - one thread per replica, inside a device guard for its device; an exception in a
//     replica is re-raised as "Caught <type> in replica i on device d.";
//   - gather concatenates on output_device (-1 or the CPU allowed);
//   - with one device: no replicas, no threads, no gather.
//
// Everything here is plain LibTorch: it runs unchanged on real GPUs.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/util/Exception.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include "gpulab/warnings.h"

namespace gpulab {

/// Where a DataParallel call runs, in CUDA indices of this process (as Python's ints).
struct ParallelPlan {
  std::vector<int> device_ids;  ///< empty: CUDA is unavailable, the module runs as it is
  int output_device = 0;        ///< -1: the CPU
  std::int64_t dim = 0;         ///< the batch dimension inputs are split along
};

/// An exception raised inside a replica, re-raised on the calling thread. what() starts with
/// Python's "Caught <type> in replica <i> on device <d>." and then gives the original message.
class ReplicaError : public c10::Error {
 public:
  /// `original`, raised by replica `replica` on CUDA device `device`.
  ReplicaError(std::size_t replica, int device, std::exception_ptr original);
  /// Which replica raised it (its position in device_ids).
  std::size_t replica() const { return replica_; }
  /// The CUDA index the replica ran on.
  int device() const { return device_; }
  /// The replica's own exception, to rethrow or inspect.
  std::exception_ptr original() const { return original_; }

 private:
  std::size_t replica_;
  int device_;
  std::exception_ptr original_;
};

/// DataParallel's steps (plan, scatter, replicate, parallel_apply, gather), as in Python's
/// torch.nn.parallel.
namespace parallel {

// ---- checks and messages (src/parallel/device_rules.cpp) ------------------------------

/// Python's DataParallel.__init__ rules: `device_ids` empty means every visible GPU,
/// `output_device` defaults to device_ids[0] (-1 is the CPU). An id that this process
/// cannot see throws ("Invalid device id ..."). With no visible GPU the plan is empty.
ParallelPlan make_plan(const std::vector<int>& device_ids, std::optional<int> output_device, std::int64_t dim);
/// The same for the functional form's arguments (torch::Device, as LibTorch's data_parallel
/// takes them). Without any GPU it throws "device type could not be determined" (Python).
ParallelPlan make_plan(const std::optional<std::vector<c10::Device>>& devices,
                       const std::optional<c10::Device>& output_device, std::int64_t dim);

/// PyTorch's placement message: "module must have its parameters and buffers on device
/// cuda:N (device_ids[0]) but found one of them on device: ...".
std::string placement_message(int primary, const c10::Device& found);
/// Throws c10::Error with placement_message() unless every parameter and buffer of
/// `module` is on cuda:`primary`.
void check_placement(const torch::nn::Module& module, int primary);

/// PyTorch's imbalance warning (_check_balance) for these devices, or nothing: it compares
/// the smallest and largest total memory, then (only if those pass) SM counts, and fires
/// below 75%. GPU numbers in the text are CUDA indices.
std::optional<std::string> imbalance_warning(const std::vector<int>& device_ids);
/// The warning's text for "exclude GPU `smaller`, which is under 75% of GPU `larger`".
std::string imbalance_message(int smaller, int larger);

// ---- scatter (src/parallel/scatter.cpp) ------------------------------------------------

/// tensor.chunk(devices.size(), dim), chunk i moved to cuda:devices[i] (a chunk already
/// there is not copied). Differentiable: gradients return to `tensor`'s device.
std::vector<at::Tensor> scatter_tensor(const at::Tensor& tensor, const std::vector<int>& devices, std::int64_t dim);

// ---- replicate (src/parallel/replicate.cpp) --------------------------------------------

/// One replica of `module` per device: the first is `module` itself (it must live on
/// devices[0]), the others are clones whose parameters' gradients are summed back into
/// the module's parameters. Needs torch::nn::Cloneable modules, as LibTorch's clone().
/// The clones' reset() does not consume the CPU random generator (state restored).
std::vector<std::shared_ptr<torch::nn::Module>> replicate_modules(const std::shared_ptr<torch::nn::Module>& module,
                                                                  const std::vector<int>& devices);

// ---- parallel_apply (src/parallel/parallel_apply.cpp) ----------------------------------

/// Runs jobs[i] inside a device guard for cuda:devices[i], each on its own thread (one job
/// runs on the calling thread), with the caller's grad mode and other thread-local state.
/// Re-raises the first failure as ReplicaError.
void run_on_devices(const std::vector<std::function<void()>>& jobs, const std::vector<int>& devices);

// ---- gather (src/parallel/gather.cpp) --------------------------------------------------

/// Concatenates the replicas' outputs along `dim` on cuda:output_device (-1: the CPU).
/// All scalars: warns as PyTorch does and returns them as a vector. Differentiable.
at::Tensor gather_tensors(const std::vector<at::Tensor>& outputs, int output_device, std::int64_t dim);

// ---- the templates: Python's recursive scatter and gather, for C++ types ---------------

/// Scatter of anything that is not a tensor, tuple or vector: the same object for every
/// device (Python passes it by reference).
template <typename T>
struct Scatter {
  /// `value` once per device.
  static std::vector<T> apply(const T& value, const std::vector<int>& devices, std::int64_t) {
    return std::vector<T>(devices.size(), value);
  }
};

/// A tensor is split along `dim` into one chunk per device, each copied to its device.
template <>
struct Scatter<at::Tensor> {
  /// The chunks of `value`, chunk i on cuda:devices[i].
  static std::vector<at::Tensor> apply(const at::Tensor& value, const std::vector<int>& devices, std::int64_t dim) {
    return scatter_tensor(value, devices, dim);
  }
};

/// A vector is scattered element by element, then zipped: as many per-device vectors as
/// the shortest element gave chunks (Python's zip(*map(scatter_map, obj))).
template <typename T>
struct Scatter<std::vector<T>> {
  /// One vector per device, element i of each scattered from values[i].
  static std::vector<std::vector<T>> apply(const std::vector<T>& values, const std::vector<int>& devices,
                                           std::int64_t dim) {
    std::vector<std::vector<T>> parts;
    std::size_t count = values.empty() ? 0 : devices.size();
    for (const T& value : values) {
      parts.push_back(Scatter<T>::apply(value, devices, dim));
      count = std::min(count, parts.back().size());
    }
    std::vector<std::vector<T>> zipped(count);
    for (std::size_t i = 0; i < count; ++i)
      for (auto& part : parts) zipped[i].push_back(part[i]);
    return zipped;
  }
};

/// A tuple is scattered element by element, then zipped, as a vector.
template <typename... Ts>
struct Scatter<std::tuple<Ts...>> {
  /// One tuple per device.
  static std::vector<std::tuple<Ts...>> apply(const std::tuple<Ts...>& values, const std::vector<int>& devices,
                                              std::int64_t dim) {
    auto parts = std::apply(
        [&](const auto&... value) {
          return std::make_tuple(Scatter<std::decay_t<decltype(value)>>::apply(value, devices, dim)...);
        },
        values);
    std::size_t count = sizeof...(Ts) == 0 ? 0 : devices.size();
    std::apply([&](const auto&... part) { ((count = std::min(count, part.size())), ...); }, parts);
    std::vector<std::tuple<Ts...>> zipped;
    for (std::size_t i = 0; i < count; ++i)
      zipped.push_back(std::apply([&](const auto&... part) { return std::make_tuple(part[i]...); }, parts));
    return zipped;
  }
};

/// Gather: tensors are concatenated; vectors and tuples of them element by element.
template <typename T>
struct Gather {
  static_assert(sizeof(T) == 0, "gpulab::data_parallel gathers tensors, and vectors or tuples of tensors");
};

/// Tensors: concatenated along `dim` on the output device.
template <>
struct Gather<at::Tensor> {
  /// gather_tensors(outputs, output_device, dim).
  static at::Tensor apply(const std::vector<at::Tensor>& outputs, int output_device, std::int64_t dim) {
    return gather_tensors(outputs, output_device, dim);
  }
};

/// Vectors: gathered element by element (as many as the shortest output has).
template <typename T>
struct Gather<std::vector<T>> {
  /// One gathered element per position.
  static std::vector<T> apply(const std::vector<std::vector<T>>& outputs, int output_device, std::int64_t dim) {
    std::size_t count = outputs.front().size();
    for (const auto& output : outputs) count = std::min(count, output.size());
    std::vector<T> gathered;
    for (std::size_t k = 0; k < count; ++k) {
      std::vector<T> column;
      for (const auto& output : outputs) column.push_back(output[k]);
      gathered.push_back(Gather<T>::apply(column, output_device, dim));
    }
    return gathered;
  }
};

/// Tuples: gathered element by element.
template <typename... Ts>
struct Gather<std::tuple<Ts...>> {
  /// The tuple of each element's gather.
  static std::tuple<Ts...> apply(const std::vector<std::tuple<Ts...>>& outputs, int output_device, std::int64_t dim) {
    return gather_elements(outputs, output_device, dim, std::index_sequence_for<Ts...>{});
  }

 private:
  template <std::size_t... K>
  static std::tuple<Ts...> gather_elements(const std::vector<std::tuple<Ts...>>& outputs, int output_device,
                                           std::int64_t dim, std::index_sequence<K...>) {
    return std::make_tuple(Gather<Ts>::apply(column<K>(outputs), output_device, dim)...);
  }
  template <std::size_t K>
  static auto column(const std::vector<std::tuple<Ts...>>& outputs) {
    std::vector<std::tuple_element_t<K, std::tuple<Ts...>>> values;
    for (const auto& output : outputs) values.push_back(std::get<K>(output));
    return values;
  }
};

/// A std::tuple input is the forward's argument list (Python's *inputs); anything else is
/// its one argument.
template <typename T>
struct IsTuple : std::false_type {};
template <typename... Ts>
struct IsTuple<std::tuple<Ts...>> : std::true_type {};

/// module.forward(input); a tuple input is passed as separate arguments.
template <typename Impl, typename Input>
auto call(Impl& module, const Input& input) {
  if constexpr (IsTuple<Input>::value)
    return std::apply([&](const auto&... args) { return module.forward(args...); }, input);
  else
    return module.forward(input);
}

/// What the module's forward returns for `Input`.
template <typename Impl, typename Input>
using Output = decltype(call(std::declval<Impl&>(), std::declval<const Input&>()));

/// The module's implementation object, from a ModuleHolder (torch::nn::Linear) or a shared_ptr.
template <typename Impl>
std::shared_ptr<Impl> impl_of(const torch::nn::ModuleHolder<Impl>& module) {
  return module.ptr();
}
/// The module itself, when it is already a shared_ptr.
template <typename Impl>
std::shared_ptr<Impl> impl_of(const std::shared_ptr<Impl>& module) {
  return module;
}

}  // namespace parallel

/// Python's torch.nn.parallel.replicate: replica i for cuda:devices[i]; the first is the
/// module itself. `module` must be on cuda:devices[0].
template <typename Impl>
std::vector<std::shared_ptr<Impl>> replicate(const std::shared_ptr<Impl>& module, const std::vector<int>& devices) {
  std::vector<std::shared_ptr<Impl>> replicas;
  for (auto& replica : parallel::replicate_modules(module, devices)) {
    auto typed = std::dynamic_pointer_cast<Impl>(replica);
    TORCH_CHECK(typed != nullptr, "replicate: clone() of ", module->name(), " returned another module type");
    replicas.push_back(std::move(typed));
  }
  return replicas;
}

/// Python's torch.nn.parallel.parallel_apply: replicas[i]->forward(inputs[i]) on cuda:devices[i],
/// one thread each.
template <typename Impl, typename Input>
std::vector<parallel::Output<Impl, Input>> parallel_apply(const std::vector<std::shared_ptr<Impl>>& replicas,
                                                          const std::vector<Input>& inputs,
                                                          const std::vector<int>& devices) {
  TORCH_CHECK(replicas.size() == inputs.size() && inputs.size() == devices.size(), "parallel_apply: ",
              replicas.size(), " replicas, ", inputs.size(), " inputs and ", devices.size(), " devices");
  std::vector<parallel::Output<Impl, Input>> outputs(replicas.size());
  std::vector<std::function<void()>> jobs;
  for (std::size_t i = 0; i < replicas.size(); ++i)
    jobs.emplace_back([&, i] { outputs[i] = parallel::call(*replicas[i], inputs[i]); });
  parallel::run_on_devices(jobs, devices);
  return outputs;
}

namespace parallel {

/// Scatter, replicate, parallel_apply, gather — the body of Python's DataParallel.forward
/// once the module passed the placement check.
template <typename Impl, typename Input>
Output<Impl, Input> run(const std::shared_ptr<Impl>& module, const Input& input, const ParallelPlan& plan) {
  using Result = Output<Impl, Input>;
  std::vector<Input> inputs = Scatter<Input>::apply(input, plan.device_ids, plan.dim);
  // Nothing to scatter (an empty tuple or vector): the module runs once, on device_ids[0].
  if (inputs.empty()) inputs.push_back(input);
  if (plan.device_ids.size() == 1) return call(*module, inputs.front());
  const std::vector<int> used(plan.device_ids.begin(),
                              plan.device_ids.begin() + static_cast<std::ptrdiff_t>(inputs.size()));
  const auto replicas = replicate(module, used);
  const std::vector<Result> outputs = parallel_apply(replicas, inputs, used);
  return Gather<Result>::apply(outputs, plan.output_device, plan.dim);
}

}  // namespace parallel

/// Python's torch.nn.parallel.data_parallel, with the parameters of LibTorch's
/// torch::nn::parallel::data_parallel. `devices` defaults to every visible GPU and
/// `output_device` to devices[0]; the module must already be on devices[0].
template <typename ModuleType, typename Input>
auto data_parallel(ModuleType module, Input input, std::optional<std::vector<c10::Device>> devices = std::nullopt,
                   std::optional<c10::Device> output_device = std::nullopt, std::int64_t dim = 0) {
  const auto impl = parallel::impl_of(module);
  const ParallelPlan plan = parallel::make_plan(devices, output_device, dim);
  parallel::check_placement(*impl, plan.device_ids.front());
  return parallel::run(impl, input, plan);
}

/// Python's torch.nn.DataParallel. A module itself: the wrapped module is registered as
/// "module", so parameters() (for an optimizer), train() and eval() reach it.
///
///   gpulab::DataParallel model(net, {2, 3});   // net on cuda:2; replicas on cuda:2 and cuda:3
///   auto output = model.forward(batch);        // gathered on cuda:2
template <typename ModuleType>
class DataParallel : public torch::nn::Module {
 public:
  /// The module's implementation type (`Net` for a `torch::nn::ModuleHolder<Net>`).
  using Impl = typename decltype(parallel::impl_of(std::declval<ModuleType>()))::element_type;

  /// `device_ids` empty: every visible GPU (Python's None). `output_device`: a CUDA index,
  /// -1 for the CPU; default device_ids[0]. Warns when the GPUs are imbalanced; with one
  /// device, moves the module there (as Python does).
  explicit DataParallel(ModuleType module, const std::vector<int>& device_ids = {},
                        std::optional<int> output_device = std::nullopt, std::int64_t dim = 0)
      : torch::nn::Module("DataParallel"),
        module_(std::move(module)),
        plan_(parallel::make_plan(device_ids, output_device, dim)) {
    register_module("module", parallel::impl_of(module_));
    if (plan_.device_ids.empty()) return;
    if (const auto warning = parallel::imbalance_warning(plan_.device_ids)) warn(*warning);
    if (plan_.device_ids.size() == 1)
      parallel::impl_of(module_)->to(c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(plan_.device_ids[0])));
  }

  /// Checks the module is on device_ids[0], then scatter, replicate, parallel_apply, gather.
  template <typename Input>
  auto forward(const Input& input) {
    const auto impl = parallel::impl_of(module_);
    if (plan_.device_ids.empty()) return parallel::call(*impl, input);
    parallel::check_placement(*impl, plan_.device_ids.front());
    return parallel::run(impl, input, plan_);
  }
  /// forward(input), as a module is called.
  template <typename Input>
  auto operator()(const Input& input) {
    return forward(input);
  }

  /// The wrapped module (Python's .module).
  ModuleType& module() { return module_; }
  /// The CUDA indices it runs on; device_ids()[0] holds the module.
  const std::vector<int>& device_ids() const { return plan_.device_ids; }
  /// Where outputs are gathered: a CUDA index, -1 for the CPU.
  int output_device() const { return plan_.output_device; }
  /// The dimension inputs are scattered along.
  std::int64_t dim() const { return plan_.dim; }

 private:
  ModuleType module_;
  ParallelPlan plan_;
};

}  // namespace gpulab
