// The software profile: a PyTorch build that shipped, that is a release and the CUDA
// version of one of its official builds. Contexts, device guards and messages differ
// between builds (docs/reference.md "Profiles"), so the simulated node models one and
// every version-dependent rule asks it. Each rule's source is a released binary
// (tests/fixtures/torch-facts/, written by tools/torch-facts.sh) or that release's code.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace gpulab {

/// A CUDA version as official PyTorch builds name it: 12.8 is "cu128".
struct CudaVersion {
  int major = 0;  ///< 12 in 12.8
  int minor = 0;  ///< 8 in 12.8
  /// "12.8".
  std::string text() const;
  bool operator==(const CudaVersion& other) const { return major == other.major && minor == other.minor; }
  bool operator!=(const CudaVersion& other) const { return !(*this == other); }
};

/// The forms of PyTorch's CUDA out-of-memory text (c10/cuda/CUDACachingAllocator.cpp),
/// named as in tests/fixtures/torch-facts/README.md.
enum class OomTextForm {
  A,  ///< 1.13, 2.0: "(GPU 0; 7.51 GiB total capacity; … already allocated; …)"
  B,  ///< 2.1: "GPU 0 has a total capacty of …" (sic), NVML's processes, max_split_size_mb tail
  C,  ///< 2.2 to 2.9: "total capacity", PYTORCH_CUDA_ALLOC_CONF=expandable_segments tail, pytorch.org link
  D,  ///< 2.10: the tail names PYTORCH_ALLOC_CONF=expandable_segments
  E,  ///< 2.11 and later: PYTORCH_CUDA_ALLOC_CONF again, the docs.pytorch.org link
};

/// The forms of the text C10_CUDA_CHECK appends to "CUDA error: <error>".
enum class CudaErrorSuffixForm {
  NoSpace,    ///< 1.x: "…at some other API call,so the stacktrace…", "…=1."
  FullStop,   ///< 2.0 to 2.3: a space after the comma, "…=1."
  NoFullStop, ///< 2.4 and later: "…=1" without the full stop
};

/// A software profile: the linked PyTorch release and the CUDA version of the official
/// build of it that gpulab models (docs/reference.md, "Profiles").
struct Profile {
  int torch_major = 0;  ///< PyTorch's major version (2 in 2.15.0)
  int torch_minor = 0;  ///< PyTorch's minor version (15 in 2.15.0)
  int torch_patch = 0;  ///< PyTorch's patch level (0 in 2.15.0)
  CudaVersion cuda;     ///< the build's CUDA (13.2 in PyPI's 2.15.0 wheel)

  /// "2.15.0".
  std::string torch_version() const;
  /// "PyTorch 2.15.0 (CUDA 13.2 build)": what every view and report prints.
  std::string name() const;
  /// The PyTorch version is `major`.`minor` or later.
  bool torch_at_least(int major, int minor) const;

  /// CUDA 12's cudaSetDevice creates the device's primary context ("As of CUDA 12.0,
  /// cudaSetDevice() will now explicitly initialize the runtime"); CUDA 11's only selects
  /// the device, and the context waits for real work.
  bool set_device_creates_context() const { return cuda.major >= 12; }
  /// c10::cuda::SetDevice(d) returns early when cudaGetDevice already says d, from 2.1
  /// (1.13 and 2.0 call cudaSetDevice anyway). From 2.8 it takes `force`, which skips the
  /// check; Python's torch.cuda.set_device passes force=true (PR 155900, issue 155668).
  bool set_device_skips_current(bool force) const { return torch_at_least(2, 1) && !(force && torch_at_least(2, 8)); }
  /// torch.cuda.set_device (and so gpulab::cuda::set_device) calls c10::cuda::set_device
  /// with force=true from 2.8.
  bool python_set_device_forces() const { return torch_at_least(2, 8); }
  /// Leaving a device guard restores the previous device with cudaSetDevice, except in
  /// 2.1+ builds against CUDA 12 or later: their MaybeSetDevice only records the device
  /// when it has no primary context (PR 94864; `#if CUDA_VERSION >= 12000` in
  /// c10/cuda/CUDAFunctions.cpp, so 2.1-2.7's CUDA 11.8 builds still call cudaSetDevice).
  bool guard_restore_sets_device() const { return !(torch_at_least(2, 1) && cuda.major >= 12); }
  /// Which form of the out-of-memory text this PyTorch prints.
  OomTextForm oom_text_form() const;
  /// Which suffix this PyTorch appends to "CUDA error: …".
  CudaErrorSuffixForm cuda_error_suffix_form() const;
  /// Whether that suffix ("…might be asynchronously reported…") follows an error with this
  /// code: every error before 2.13, only the asynchronous ones (700, 710, 715, 716, 719:
  /// get_cuda_async_error_suffix) from 2.13.
  bool cuda_error_async_suffix_for(int code) const;
  /// get_cuda_error_help's line after the error (2.9 and later): where to read about it, or
  /// for error 101 "GPU device may be out of range, do you have enough GPUs?".
  bool cuda_error_help_line() const { return torch_at_least(2, 9); }
  /// c10_cuda_check_implementation's "\nCompile with `TORCH_USE_CUDA_DSA` …" (2.0 to 2.12).
  bool cuda_error_dsa_line() const { return torch_at_least(2, 0) && !torch_at_least(2, kDsaLineGoneMinor); }
  /// The out-of-memory text splits "…by PyTorch, " and "and " around an optional
  /// private-pools part (CUDA graphs) from 2.4.
  bool oom_text_has_private_pools_part() const { return torch_at_least(2, 4); }

  /// The first 2.x release whose CUDA error texts lost the DSA line and whose
  /// asynchronous-report suffix follows only asynchronous errors.
  static constexpr int kDsaLineGoneMinor = 13;

  /// A generated CUDA wrapper's same-device message names the argument first ("but got mat1
  /// is on cpu, different from other tensors on cuda:1 …") from this 2.x release; before it,
  /// "but found at least two devices, cuda:1 and cpu! (when checking argument for argument
  /// mat1 …)" (tests/fixtures/torch-facts/same-device/).
  static constexpr int kArgumentFirstDeviceMessageMinor = 8;
  /// The generated wrappers' method names carry the dispatch key ("wrapper_CUDA_addmm")
  /// from 2.0; 1.13's are "wrapper_addmm".
  bool wrapper_names_carry_dispatch_key() const { return torch_at_least(2, 0); }
  /// The same-device message of a generated wrapper names the argument first.
  bool device_message_names_argument_first() const { return torch_at_least(2, kArgumentFirstDeviceMessageMinor); }
};

/// One PyTorch release's official CUDA builds: its compatibility matrix (RELEASE.md) and
/// the one PyPI's default wheel carries (its torch/version.py).
struct ShippedRelease {
  int major = 0;                    ///< 2 in 2.15
  int minor = 0;                    ///< 15 in 2.15
  std::vector<CudaVersion> builds;  ///< every CUDA it shipped a build for, oldest first
  CudaVersion pypi_default;         ///< the CUDA of PyPI's default Linux wheel
};

/// Every release gpulab has a profile for, oldest first.
const std::vector<ShippedRelease>& shipped_releases();

/// The release's entry; nullopt for a release gpulab has no profile for.
std::optional<ShippedRelease> shipped_release(int torch_major, int torch_minor);

/// The builds that differ in some rule, for tests that try each: PyPI's default first, then
/// the newest build of every other CUDA major version the release shipped (11.8 beside
/// 2.1-2.7's CUDA 12 default). Within one major version every rule here is the same.
std::vector<CudaVersion> builds_per_cuda_major(const ShippedRelease& release);

/// Parses GPULAB_CUDA_BUILD ("12.8"): nullopt when unset or empty; anything but
/// MAJOR.MINOR throws std::invalid_argument naming the variable.
std::optional<CudaVersion> parse_cuda_build(const char* value);

/// The profile of a linked PyTorch: its release and, unless `cuda_build_override`
/// (GPULAB_CUDA_BUILD's value) names another of its builds, PyPI's default build of it.
/// A release gpulab has no profile for, or a CUDA the release never shipped a build
/// for, throws std::invalid_argument listing the builds that exist.
Profile make_profile(int torch_major, int torch_minor, int torch_patch, const char* cuda_build_override);

/// "1.13.1" -> {1, 13, 1}; "2.4" -> {2, 4, 0}; trailing text ("+dfsg-4", "a0") ignored.
/// nullopt when the text does not start with MAJOR.MINOR. The CUDA version stays 0.0.
std::optional<Profile> parse_torch_version(const std::string& text);

/// {"torch": "2.15.0", "cuda": "13.2", "name": "PyTorch 2.15.0 (CUDA 13.2 build)"}: the
/// "profile" object of reports, `gpulab devices --json` and `gpulab smi --json`.
nlohmann::json profile_to_json(const Profile& profile);
/// The inverse; nullopt when `json` lacks "torch" or "cuda" or they do not parse.
std::optional<Profile> profile_from_json(const nlohmann::json& json);

}  // namespace gpulab
