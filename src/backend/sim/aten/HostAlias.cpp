#include "HostAlias.h"

#include <ATen/core/TensorBody.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/intrusive_ptr.h>

#include "backend/torch_compat.h"

namespace gpulab::sim {
namespace {

void drop_storage_reference(void* storage_impl) {
  c10::raw::intrusive_ptr::decref(static_cast<c10::StorageImpl*>(storage_impl));
}

at::Tensor tensor_on(c10::Storage storage, c10::DispatchKey key, const at::Tensor& geometry) {
  auto tensor = at::detail::make_tensor<c10::TensorImpl>(std::move(storage), c10::DispatchKeySet(key),
                                                         geometry.dtype());
  tensor.unsafeGetTensorImpl()->set_sizes_and_strides(geometry.sizes(), geometry.strides(),
                                                       geometry.storage_offset());
  return tensor;
}

}  // namespace

at::Tensor host_alias(const at::Tensor& tensor) {
  if (!tensor.defined() || !tensor.is_cuda()) return tensor;
  const c10::Storage& storage = tensor.storage();
  c10::StorageImpl* impl = storage.unsafeGetStorageImpl();
  c10::raw::intrusive_ptr::incref(impl);
  c10::DataPtr bytes(GPULAB_STORAGE_MUTABLE_DATA(storage), impl, &drop_storage_reference, c10::Device(c10::DeviceType::CPU));
  // Resizable with the CPU allocator: an out= kernel that resizes gets fresh host memory,
  // which the caller notices (data pointer changed) and copies back to the device.
  c10::Storage alias(c10::Storage::use_byte_size_t(), storage.nbytes(), std::move(bytes),
                     c10::GetCPUAllocator(), /*resizable=*/true);
  return tensor_on(std::move(alias), c10::DispatchKey::CPU, tensor);
}

at::Tensor device_view(const at::Tensor& device_storage_of, const at::Tensor& view) {
  return tensor_on(device_storage_of.storage(), c10::DispatchKey::CUDA, view);
}

}  // namespace gpulab::sim
