// The software profile: which PyTorch runs on which CUDA runtime. Contexts, device guards
// and messages differ between the two (docs/reference.md "Contexts and memory", "Profiles"),
// so the simulated node models one explicit pair and every version-dependent rule asks it.
#pragma once

#include <optional>
#include <string>

namespace gpulab {

/// The forms of PyTorch's CUDA out-of-memory text (c10/cuda/CUDACachingAllocator.cpp).
enum class OomTextForm {
  Torch113,     ///< 1.13 and 2.0: "(GPU 0; 7.51 GiB total capacity; … already allocated; …)"
  Torch21,      ///< 2.1: "GPU 0 has a total capacty of …" (sic), max_split_size_mb tail
  Torch22,      ///< 2.2 to 2.10: "total capacity", expandable_segments tail, pytorch.org link
  Torch211,     ///< 2.11 and later: the same with the docs.pytorch.org link
};

/// The forms of the text C10_CUDA_CHECK appends to "CUDA error: <error>".
enum class CudaErrorSuffixForm {
  Torch1,       ///< 1.x: "…at some other API call,so the stacktrace…" (no space), "…=1."
  Torch20,      ///< 2.0: a space after the comma, "…=1.", then the TORCH_USE_CUDA_DSA line
  Torch21,      ///< 2.1 and later: "…=1" without the full stop, then the DSA line
};

/// A software profile: the linked PyTorch's version and the CUDA runtime it runs on
/// (docs/reference.md, "Profiles"). Every version-dependent rule asks it.
struct Profile {
  int torch_major = 0;  ///< PyTorch's major version (1 in 1.13.1)
  int torch_minor = 0;  ///< PyTorch's minor version (13 in 1.13.1)
  int torch_patch = 0;  ///< PyTorch's patch level (1 in 1.13.1)
  int cuda_runtime = 0;  ///< the CUDA runtime's major version: 11, 12 (13 on real GPUs)

  /// "1.13.1".
  std::string torch_version() const;
  /// The PyTorch version is `major`.`minor` or later.
  bool torch_at_least(int major, int minor) const;

  /// CUDA 12's cudaSetDevice creates the device's primary context ("As of CUDA 12.0,
  /// cudaSetDevice() will now explicitly initialize the runtime"); CUDA 11's only selects
  /// the device, and the context waits for real work.
  bool set_device_creates_context() const { return cuda_runtime >= 12; }
  /// Leaving a device guard calls cudaSetDevice(previous) before PyTorch 2.1; from 2.1 it
  /// calls MaybeSetDevice(previous), which only records the device when it has no context
  /// (PR 94864).
  bool guard_restore_sets_device() const { return !torch_at_least(2, 1); }
  /// torch.cuda.set_device(d) skips cudaSetDevice when d is already the thread's device:
  /// on a fresh thread set_device(0) creates no context, until PR 155900 (2.8; issue 155668).
  bool set_device_zero_on_fresh_thread_is_noop() const { return !torch_at_least(2, 8); }
  /// Which form of the out-of-memory text this PyTorch prints.
  OomTextForm oom_text_form() const;
  /// Which suffix this PyTorch appends to "CUDA error: …".
  CudaErrorSuffixForm cuda_error_suffix_form() const;
};

/// The CUDA runtime major version the official CUDA builds of a PyTorch release shipped
/// with: 11 for 1.13 (cu116/cu117) and 2.0 (cu117/cu118), 12 for 2.1 and later (cu121…).
int official_cuda_runtime(int torch_major, int torch_minor);

/// Parses GPULAB_CUDA_RUNTIME: nullopt when unset; 11 or 12; anything else throws
/// std::invalid_argument naming the variable and the accepted values.
std::optional<int> parse_cuda_runtime(const char* value);

/// The profile of a linked PyTorch: its version and the runtime its official CUDA builds
/// used, unless `cuda_runtime_override` (GPULAB_CUDA_RUNTIME's value) says otherwise.
Profile make_profile(int torch_major, int torch_minor, int torch_patch, const char* cuda_runtime_override);

/// "1.13.1" -> {1, 13, 1}; "2.4" -> {2, 4, 0}; trailing text ("+dfsg-4", "a0") ignored.
/// nullopt when the text does not start with MAJOR.MINOR.
std::optional<Profile> parse_torch_version(const std::string& text);

}  // namespace gpulab
