// The few places where LibTorch 1.13 and 2.x differ for gpulab, as macros, so that the
// rest of the code reads the same for both (see docs/libtorch-versions.md).
#pragma once

#include <torch/version.h>

#define GPULAB_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

// Allocator::allocate lost its const in 2.3, when copy_data became pure virtual.
#if GPULAB_TORCH_AT_LEAST(2, 3)
#define GPULAB_ALLOCATE_CONST
#define GPULAB_ALLOCATOR_EXTRA_OVERRIDES void copy_data(void* dest, const void* src, std::size_t count) const override;
#else
#define GPULAB_ALLOCATE_CONST const
#define GPULAB_ALLOCATOR_EXTRA_OVERRIDES
#endif

// at::CUDAHooksInterface: device indices were int64_t up to 2.0 (hasPrimaryContext,
// current_device, deviceSynchronize), c10::DeviceIndex from 2.1.
#if GPULAB_TORCH_AT_LEAST(2, 1)
#define GPULAB_HOOKS_INDEX c10::DeviceIndex
#else
#define GPULAB_HOOKS_INDEX int64_t
#endif

// at::CUDAHooksInterface: initCUDA and getDefaultCUDAGenerator became the
// AcceleratorHooksInterface overrides init and getDefaultGenerator in 2.6.
#if GPULAB_TORCH_AT_LEAST(2, 6)
#define GPULAB_HOOKS_INIT init
#define GPULAB_HOOKS_DEFAULT_GENERATOR getDefaultGenerator
#else
#define GPULAB_HOOKS_INIT initCUDA
#define GPULAB_HOOKS_DEFAULT_GENERATOR getDefaultCUDAGenerator
#endif

// c10::Storage::data() returns const void* from 2.1; mutable_data() is the writable one.
#if GPULAB_TORCH_AT_LEAST(2, 1)
#define GPULAB_STORAGE_MUTABLE_DATA(storage) (storage).mutable_data()
#else
#define GPULAB_STORAGE_MUTABLE_DATA(storage) (storage).data()
#endif
