// Kernels registered for the CUDA dispatch key: tensor creation on simulated device
// memory, copies between the host and any device, and the metadata-only view ops that
// must keep pointing at device memory. Every other op goes through SimFallback.cpp.
// Like PyTorch's generated CUDA registrations (`device_guard` in native_functions.yaml),
// each kernel that touches a device first enters a device guard for it, so guard entry
// and restore — and the contexts they make on some profiles — happen where they would on
// a real GPU. View ops have no guard, as in PyTorch.
#include <ATen/EmptyTensor.h>
#include <ATen/Functions.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/resize_native.h>
#include <ATen/ops/set_native.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "HostAlias.h"
#include "SimAllocator.h"
#include "SimDevice.h"
#include "SimErrors.h"

namespace gpulab::sim {
namespace {

// Resolves a factory's target device; errors as CUDA would for no device or a bad ordinal.
int factory_device(c10::optional<c10::Device> device) {
  Driver& d = driver();
  TORCH_CHECK(d.device_count() > 0, "No CUDA GPUs are available");
  const int index = device ? resolve_index(*device) : current_device();
  check(d.check_device(index));
  return index;
}

at::Tensor empty_memory_format(at::IntArrayRef size, c10::optional<at::ScalarType> dtype,
                               c10::optional<at::Layout> layout, c10::optional<c10::Device> device,
                               c10::optional<bool> pin_memory, c10::optional<at::MemoryFormat> memory_format) {
  (void)layout;
  (void)pin_memory;
  const c10::DeviceGuard guard(cuda(factory_device(device)));
  return at::detail::empty_generic(size, &cuda_allocator(), c10::DispatchKeySet(c10::DispatchKey::CUDA),
                                   c10::dtype_or_default(dtype), memory_format);
}

at::Tensor empty_strided(at::IntArrayRef size, at::IntArrayRef stride, c10::optional<at::ScalarType> dtype,
                         c10::optional<at::Layout> layout, c10::optional<c10::Device> device,
                         c10::optional<bool> pin_memory) {
  (void)layout;
  (void)pin_memory;
  const c10::DeviceGuard guard(cuda(factory_device(device)));
  return at::detail::empty_strided_generic(size, stride, &cuda_allocator(),
                                           c10::DispatchKeySet(c10::DispatchKey::CUDA), c10::dtype_or_default(dtype));
}

// Work on a device needs its context (the allocation usually made it already).
void touch(const at::Tensor& tensor) {
  if (tensor.defined() && tensor.is_cuda()) check(driver().ensure_context(tensor.device().index()));
}

at::Tensor& copy_(at::Tensor& self, const at::Tensor& src, bool non_blocking) {
  (void)non_blocking;  // the host copy is complete on return, which non_blocking allows
  // PyTorch's copy kernel guards the destination's device, or the source's for a copy to the host.
  const c10::OptionalDeviceGuard guard(self.is_cuda() ? self.device() : src.device());
  touch(self);
  touch(src);
  host_alias(self).copy_(host_alias(src));
  return self;
}

at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  at::Tensor out = dst;
  return copy_(out, self, non_blocking);
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  dst.resize_(self.sizes());
  return copy_from(self, dst, false);
}

const at::Tensor& resize_(const at::Tensor& self, at::IntArrayRef size,
                          c10::optional<at::MemoryFormat> memory_format) {
  // Growing re-allocates through the storage's allocator, which serves the current device.
  const c10::DeviceGuard guard(self.device());
  return at::native::resize_(self, size, memory_format);
}

at::Tensor& set_source_storage_offset(at::Tensor& self, c10::Storage source, int64_t offset,
                                      at::IntArrayRef size, at::IntArrayRef stride) {
  return at::native::set_storage_cpu_(self, std::move(source), offset, size, stride);
}

at::Tensor& set_source_storage(at::Tensor& self, c10::Storage source) {
  const auto elements = static_cast<int64_t>(source.nbytes() / self.dtype().itemsize());
  return set_source_storage_offset(self, std::move(source), 0, {elements}, {});
}

at::Tensor& set_source_tensor(at::Tensor& self, const at::Tensor& source) {
  return at::native::set_tensor_(self, source);
}

at::Tensor& set_empty(at::Tensor& self) {
  const c10::DeviceGuard guard(self.device());
  c10::Storage empty(c10::Storage::use_byte_size_t(), 0, &cuda_allocator(), /*resizable=*/true);
  return set_source_storage_offset(self, std::move(empty), 0, {0}, {});
}

at::Scalar local_scalar_dense(const at::Tensor& self) {
  const c10::DeviceGuard guard(self.device());
  touch(self);
  return at::_local_scalar_dense(host_alias(self));
}

// CUDA's dropout kernel (torch::dropout on a CUDA tensor in training): a bool mask drawn
// from the device's generator. The CPU kernel would draw from the CPU generator, since the
// op takes no generator argument for the fallback to fill in.
std::tuple<at::Tensor, at::Tensor> native_dropout(const at::Tensor& input, double p, c10::optional<bool> train) {
  const c10::DeviceGuard guard(input.device());
  const auto bool_options = input.options().dtype(at::kBool);
  if (train.has_value() && !*train) return {input.clone(), at::ones_like(input, bool_options)};
  if (p == 1) return {at::zeros_like(input), at::zeros_like(input, bool_options)};
  const double keep = 1 - p;
  at::Tensor mask = at::empty_like(input, bool_options).bernoulli_(keep);
  return {input.mul(mask).mul_(1 / keep), mask};
}

}  // namespace
}  // namespace gpulab::sim

// ---- registration ----------------------------------------------------------------------
TORCH_LIBRARY_IMPL(aten, CUDA, m) {
  // creation and copies
  m.impl("empty.memory_format", TORCH_FN(gpulab::sim::empty_memory_format));
  m.impl("empty_strided", TORCH_FN(gpulab::sim::empty_strided));
  m.impl("copy_", TORCH_FN(gpulab::sim::copy_));
  m.impl("_copy_from", TORCH_FN(gpulab::sim::copy_from));
  m.impl("_copy_from_and_resize", TORCH_FN(gpulab::sim::copy_from_and_resize));
  m.impl("resize_", TORCH_FN(gpulab::sim::resize_));
  m.impl("_local_scalar_dense", TORCH_FN(gpulab::sim::local_scalar_dense));
  // random ops that take no generator argument
  m.impl("native_dropout", TORCH_FN(gpulab::sim::native_dropout));
  // views: metadata only, device-independent implementations
  m.impl("view", TORCH_FN(at::native::view));
  m.impl("as_strided", TORCH_FN(at::native::as_strided_tensorimpl));
  m.impl("_reshape_alias", TORCH_FN(at::native::_reshape_alias));
  m.impl("unfold", TORCH_FN(at::native::unfold));
  m.impl("set_.source_Storage", TORCH_FN(gpulab::sim::set_source_storage));
  m.impl("set_.source_Storage_storage_offset", TORCH_FN(gpulab::sim::set_source_storage_offset));
  m.impl("set_.source_Tensor", TORCH_FN(gpulab::sim::set_source_tensor));
  m.impl("set_", TORCH_FN(gpulab::sim::set_empty));
}
