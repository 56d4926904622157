// The boxed fallback for every CUDA op without its own kernel: run the CPU kernel on
// host aliases of the device tensors. Inputs are not copied and in-place/out= results
// land in device memory directly; only freshly created results are copied onto the
// device (through the caching allocator, so they count as device memory).
//
// Unlike at::native::cpu_fallback, it keeps CUDA's device rules: all tensors of an op
// must be on one device, else the linked release's "Expected all tensors to be on the
// same device" error, checked as the op's CUDA build checks (a generated wrapper's check
// over its arguments, or TensorIterator's, which lets CPU scalars through:
// model/cuda_messages.h); the op runs inside a device guard for that device, as
// PyTorch's generated CUDA registrations do; and random ops draw from the device's own
// generator.
#include <ATen/Context.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/ivalue.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <optional>
#include <string>
#include <vector>

#include "HostAlias.h"
#include "model/cuda_messages.h"
#include "SimErrors.h"

namespace gpulab::sim {
namespace {

struct Aliased {
  at::Tensor device;  // the caller's CUDA tensor
  at::Tensor host;    // its host alias, handed to the CPU kernel
};

// TensorIterator's rule (and, for ops model/cuda_messages.cpp does not list, the
// simulator's): the first GPU tensor sets the device; CPU 0-dim tensors are allowed.
class DeviceRule {
 public:
  explicit DeviceRule(const OpDeviceCheck& check) : cpu_tensors_allowed_(check.cpu_indices_allowed) {}

  void see(const at::Tensor& tensor) {
    if (!tensor.defined()) return;
    if (tensor.is_cuda()) {
      if (!device_) device_ = tensor.device();
      else if (*device_ != tensor.device()) conflict(*device_, tensor.device());
      if (cpu_) conflict(*device_, *cpu_);
    } else if (tensor.is_cpu() && tensor.dim() > 0 && !cpu_tensors_allowed_) {
      cpu_ = tensor.device();
      if (device_) conflict(*device_, *cpu_);
    }
  }
  void see_device_argument(const c10::Device& device) {
    if (!device_) device_ = c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(resolve(device)));
  }
  std::optional<c10::Device> device() const { return device_; }

 private:
  static int resolve(const c10::Device& device) {
    return device.has_index() ? device.index() : current_device();
  }
  [[noreturn]] static void conflict(const c10::Device& common, const c10::Device& other) {
    TORCH_CHECK(false, join_pieces(iterator_device_mismatch_pieces(common.str(), other.str())));
  }
  bool cpu_tensors_allowed_;
  std::optional<c10::Device> device_;
  std::optional<c10::Device> cpu_;
};

// A generated CUDA wrapper's check (c10::impl::check_and_update_common_device): every
// defined tensor of the schema's tensor arguments, in order (a structured kernel's out=
// arguments first), must be on the first one's device, CPU 0-dim tensors included.
class WrapperDeviceCheck {
 public:
  WrapperDeviceCheck(const c10::OperatorHandle& op, const OpDeviceCheck& check) : op_(op), check_(check) {}

  void run(const torch::jit::Stack& stack, std::size_t first) {
    const auto& arguments = op_.schema().arguments();
    if (check_.structured)
      for (std::size_t i = 0; i < arguments.size(); ++i)
        if (arguments[i].is_out()) see(arguments[i].name(), stack[first + i]);
    for (std::size_t i = 0; i < arguments.size(); ++i)
      if (!check_.structured || !arguments[i].is_out()) see(arguments[i].name(), stack[first + i]);
  }

 private:
  void see(const std::string& argument, const c10::IValue& value) {
    if (value.isTensor()) return see(argument, value.toTensor());
    if (value.isTensorList())
      for (const at::Tensor& tensor : value.toTensorList()) see(argument, tensor);
    else if (value.isList())  // Tensor?[]
      for (const c10::IValue& item : value.toListRef()) see(argument, item);
  }
  void see(const std::string& argument, const at::Tensor& tensor) {
    if (!tensor.defined()) return;
    if (!common_) {
      common_ = tensor.device();
      return;
    }
    if (*common_ == tensor.device()) return;
    const auto& name = op_.schema().operator_name();
    const std::string method = cuda_wrapper_method_name(Driver::current_profile(), name.name.substr(6),
                                                        name.overload_name);
    TORCH_CHECK(false, join_pieces(wrapper_device_mismatch_pieces(Driver::current_profile(), method, argument,
                                                                  tensor.device().str(), common_->str())));
  }
  const c10::OperatorHandle& op_;
  OpDeviceCheck check_;
  std::optional<c10::Device> common_;
};

OpDeviceCheck device_check_of(const c10::OperatorHandle& op) {
  const auto& name = op.schema().operator_name();
  if (name.name.rfind("aten::", 0) != 0) return {};
  return same_device_check_of(name.name.substr(6), name.overload_name);
}

c10::IValue to_host(const c10::IValue& value, DeviceRule& rule, std::vector<Aliased>& aliased) {
  if (value.isTensor()) {
    const at::Tensor& tensor = value.toTensor();
    rule.see(tensor);
    if (!tensor.defined() || !tensor.is_cuda()) return value;
    aliased.push_back({tensor, host_alias(tensor)});
    return aliased.back().host;
  }
  if (value.isTensorList()) {
    c10::List<at::Tensor> host;
    for (const at::Tensor& tensor : value.toTensorList()) host.push_back(to_host(tensor, rule, aliased).toTensor());
    return host;
  }
  if (value.isList()) {  // e.g. Tensor?[] of index ops
    const auto list = value.toList();
    c10::impl::GenericList host(list.elementType());
    for (std::size_t i = 0; i < list.size(); ++i) host.push_back(to_host(list.get(i), rule, aliased));
    return host;
  }
  if (value.isDevice() && value.toDevice().is_cuda()) {
    rule.see_device_argument(value.toDevice());
    return c10::Device(c10::DeviceType::CPU);
  }
  return value;
}

at::Tensor to_device(const at::Tensor& result, const std::vector<Aliased>& aliased,
                     const std::optional<c10::Device>& device) {
  if (!result.defined() || !result.is_cpu()) return result;
  for (const auto& a : aliased)
    if (result.is_same(a.host)) return a.device;  // in-place or out=: the caller's tensor
  for (const auto& a : aliased)
    if (result.storage().is_alias_of(a.host.storage())) return device_view(a.device, result);  // a view
  if (!device) return result;  // no CUDA tensor involved after all
  return result.to(*device);     // a new result: onto the device, through the allocator
}

c10::IValue to_device(const c10::IValue& value, const std::vector<Aliased>& aliased,
                      const std::optional<c10::Device>& device) {
  if (value.isTensor()) return to_device(value.toTensor(), aliased, device);
  if (value.isTensorList()) {
    c10::List<at::Tensor> out;
    for (const at::Tensor& tensor : value.toTensorList()) out.push_back(to_device(tensor, aliased, device));
    return out;
  }
  return value;
}

// A kernel that resized an out= or in-place argument changed its host alias only.
void write_back(const Aliased& a) {
  const at::Tensor& host = a.host;
  if (host.storage().data() != a.device.storage().data()) {
    a.device.resize_(host.sizes());
    host_alias(a.device).copy_(host);
  } else if (host.sizes() != a.device.sizes() || host.strides() != a.device.strides() ||
             host.storage_offset() != a.device.storage_offset()) {
    a.device.unsafeGetTensorImpl()->set_sizes_and_strides(host.sizes(), host.strides(), host.storage_offset());
  }
}

bool is_optional_generator(const c10::TypePtr& type) {
  const auto optional = type->cast<c10::OptionalType>();
  return optional != nullptr && optional->getElementType()->kind() == c10::TypeKind::GeneratorType;
}

// A random op given no generator draws from its device's default generator, as on CUDA:
// then CPU draws and other devices' draws do not shift a device's random numbers.
void use_device_generator(const c10::FunctionSchema& schema, std::size_t first, torch::jit::Stack* stack,
                          const c10::Device& device) {
  for (std::size_t i = 0; i < schema.arguments().size(); ++i) {
    c10::IValue& value = (*stack)[first + i];
    if (value.isNone() && is_optional_generator(schema.arguments()[i].type()))
      value = at::globalContext().defaultGenerator(device);
  }
}

void host_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const auto& schema = op.schema();
  const std::size_t arguments = schema.arguments().size();
  const std::size_t first = stack->size() - arguments;
  const OpDeviceCheck device_check = device_check_of(op);
  if (device_check.kind == SameDeviceCheck::GeneratedWrapper) WrapperDeviceCheck(op, device_check).run(*stack, first);
  DeviceRule rule(device_check);
  std::vector<Aliased> aliased;
  for (std::size_t i = first; i < stack->size(); ++i) (*stack)[i] = to_host((*stack)[i], rule, aliased);
  const auto device = rule.device();
  c10::OptionalDeviceGuard guard;
  if (device) {
    guard.reset_device(*device);
    check(driver().ensure_context(device->index()));  // work on a device needs its context
    use_device_generator(schema, first, stack, *device);
  }

  op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), stack);

  for (const auto& a : aliased) write_back(a);
  const std::size_t returns = schema.returns().size();
  for (std::size_t i = stack->size() - returns; i < stack->size(); ++i)
    (*stack)[i] = to_device((*stack)[i], aliased, device);
}

}  // namespace
}  // namespace gpulab::sim

// ---- registration ----------------------------------------------------------------------
TORCH_LIBRARY_IMPL(_, CUDA, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&gpulab::sim::host_fallback>());
}

// Losses whose CUDA kernel would otherwise be PyTorch's default wrapper for structured ops,
// which runs their meta function twice: it resizes the 0-dim result to the inputs' shape
// and back, warning "An output with one or more elements was resized" on every call. Their
// CPU functional kernels, run through the fallback, do not.
//
// Structured ops, whose functional and in-place forms would otherwise reach the fallback as
// their out= form, through PyTorch's CompositeExplicitAutogradNonFunctional kernels: a real
// CUDA build checks devices in the functional wrapper (wrapper_CUDA_addmm over self, mat1,
// mat2), so the fallback must see that op to raise its message.
TORCH_LIBRARY_IMPL(aten, CUDA, m) {
  m.impl("mse_loss", torch::CppFunction::makeFromBoxedFunction<&gpulab::sim::host_fallback>());
  m.impl("smooth_l1_loss", torch::CppFunction::makeFromBoxedFunction<&gpulab::sim::host_fallback>());
  m.impl("addmm", torch::CppFunction::makeFromBoxedFunction<&gpulab::sim::host_fallback>());
  m.impl("addmm_", torch::CppFunction::makeFromBoxedFunction<&gpulab::sim::host_fallback>());
  m.impl("mm", torch::CppFunction::makeFromBoxedFunction<&gpulab::sim::host_fallback>());
  m.impl("bmm", torch::CppFunction::makeFromBoxedFunction<&gpulab::sim::host_fallback>());
  m.impl("cat", torch::CppFunction::makeFromBoxedFunction<&gpulab::sim::host_fallback>());
}
