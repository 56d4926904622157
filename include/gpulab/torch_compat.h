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
