// The version of the LibTorch this library was built against, for the software profile.
#pragma once

#include <torch/version.h>

#include "model/profile.h"

namespace gpulab {

/// TORCH_VERSION_MAJOR/MINOR/PATCH; the patch level from the Debian package that
/// installed the headers when it names the same release (Debian's 1.13.1 headers say
/// 1.13.0). GPULAB_TORCH_PACKAGE_VERSION comes from CMake (cmake/GpulabTorch.cmake).
inline Profile linked_torch_version() {
  Profile version;
  version.torch_major = TORCH_VERSION_MAJOR;
  version.torch_minor = TORCH_VERSION_MINOR;
  version.torch_patch = TORCH_VERSION_PATCH;
#ifdef GPULAB_TORCH_PACKAGE_VERSION
  const auto package = parse_torch_version(GPULAB_TORCH_PACKAGE_VERSION);
  if (package && package->torch_major == version.torch_major && package->torch_minor == version.torch_minor)
    version.torch_patch = package->torch_patch;
#endif
  return version;
}

}  // namespace gpulab
