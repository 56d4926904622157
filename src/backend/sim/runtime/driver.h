// The simulated CUDA driver: one per process, created at the process's first CUDA use,
// like cuInit. It reads GPULAB_NODE, NVIDIA_VISIBLE_DEVICES (a container's GPUs),
// CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER and GPULAB_CUDA_BUILD exactly once, then owns the visible devices, the per-thread current
// device, the contexts and one caching allocator per device. Its API mirrors the CUDA
// runtime (cudaSetDevice, cudaMalloc...) and PyTorch's c10::cuda device functions
// (SetDevice, ExchangeDevice, MaybeSetDevice), whose behaviour the software profile
// decides; like CUDA, it reports failures as error codes.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "caching_allocator.h"
#include "model/container.h"
#include "model/node.h"
#include "state/node_state.h"
#include "model/profile.h"
#include "model/visibility.h"

namespace gpulab::sim {

/// cudaError_t values the simulator can return, with CUDA's numbers.
enum class Error : int {
  Success = 0,
  InvalidValue = 1,
  MemoryAllocation = 2,
  /// cudaErrorInitializationError: what every CUDA call returns in a process forked after
  /// its parent initialised CUDA (docs/reference.md, "fork after CUDA init").
  InitializationError = 3,
  NoDevice = 100,
  InvalidDevice = 101,
};

/// cudaGetErrorString's text for an error ("invalid device ordinal", ...).
const char* error_string(Error error);
/// cudaGetErrorName's: "cudaErrorInvalidDevice", ...
const char* error_name(Error error);

class Driver {
 public:
  /// The process's driver, created on first call from the environment at that moment.
  /// Throws NodeError (or std::runtime_error, std::invalid_argument) when the node, its
  /// state or GPULAB_CUDA_BUILD is unusable.
  static Driver& get();
  /// True once get() has succeeded: CUDA is initialised and the environment is frozen.
  /// Also true in a child forked after that: it inherits the driver, which it cannot use.
  static bool initialized();
  /// True in a process forked after its parent initialised CUDA: the driver it inherited
  /// belongs to the parent, and every CUDA call here fails with InitializationError, as a
  /// real CUDA runtime's do. Device count and properties stay readable (PyTorch caches them).
  static bool forked_after_init();
  /// InitializationError in a process forked after init (forked_after_init), else Success.
  static Error fork_check();
  /// The PyTorch version the simulator stands behind (the linked LibTorch's); set by the
  /// LibTorch adapters before the driver is created.
  static void set_torch_version(int major, int minor, int patch);
  /// The profile a driver created now would have (reads GPULAB_CUDA_BUILD); the
  /// driver's own once it exists.
  static Profile current_profile();

  const Node& node() const { return node_; }
  const Profile& profile() const { return profile_; }
  const std::optional<std::string>& cuda_visible_devices() const { return cuda_visible_devices_; }
  /// The container this process runs in (NVIDIA_VISIBLE_DEVICES); Kind::Host outside one.
  const ContainerView& container() const { return container_; }
  DeviceOrder device_order() const { return order_; }
  int device_count() const { return static_cast<int>(devices_.size()); }
  const VisibleDevice& device(int index) const { return devices_.at(static_cast<std::size_t>(index)); }
  int physical_index(int index) const { return device(index).physical_index; }
  /// cudaMemGetInfo's total for the device: what its allocations and contexts fit in.
  std::uint64_t capacity_bytes(int index) const;
  /// Success, or why `index` is unusable here: InitializationError in a child forked after
  /// init (checked first, as the CUDA runtime does on every call), NoDevice, InvalidDevice.
  Error check_device(int index) const;

  // ---- the CUDA runtime ----------------------------------------------------------------
  /// cudaSetDevice: makes `index` the calling thread's device; on CUDA 12 it also creates
  /// the device's primary context.
  Error cuda_set_device(int index);
  /// cudaGetDevice: the calling thread's device; every thread starts on device 0.
  static int cuda_get_device();

  // ---- PyTorch's c10::cuda device functions, as the profile's PyTorch has them ----------
  /// c10::cuda::current_device: the device PyTorch considers current — the one a guard
  /// restore only recorded (PyTorch >= 2.1), else cudaGetDevice.
  static int current_device();
  /// torch.cuda.set_device (Python's, not C++'s c10::cuda::set_device): skips
  /// cudaSetDevice when `index` is already the thread's device in 2.1-2.7; from 2.8 it
  /// passes force=true, and 1.13/2.0 never skipped.
  Error set_device(int index);
  /// Entering a device guard (ExchangeDevice): cudaSetDevice(index) unless `index` is
  /// current. `previous` receives the device to restore.
  Error exchange_device(int index, int* previous);
  /// A guard's setDevice (DeviceGuard::set_device, autograd's device threads):
  /// cudaSetDevice before 2.1, SetDevice (skips the current device) from 2.1. (1.13.1's
  /// CUDAGuardImpl::setDevice skips the current device too; on its CUDA 11 builds a
  /// cudaSetDevice to the current device changes nothing anyway.)
  Error guard_set_device(int index);
  /// Leaving a device guard: cudaSetDevice(index) before 2.1 and in CUDA 11 builds; from
  /// 2.1 on CUDA 12+ MaybeSetDevice, which only records `index` when it has no context
  /// (PR 94864).
  Error maybe_set_device(int index);
  /// c10::cuda::MaybeExchangeDevice, the accelerator API's maybeExchangeDevice (Python's
  /// `torch.cuda.device.__exit__`). In 2.1+ builds against CUDA 12+ (2.15's libc10_cuda.so):
  /// `previous` is cudaGetDevice's device, not a recorded one; nothing happens when `index` is
  /// it; otherwise cudaSetDevice(index) when `index` has a context, else `index` is only
  /// recorded. Elsewhere like maybe_set_device after reading the current device.
  Error maybe_exchange_device(int index, int* previous);

  /// Creates the device's primary context if it has none (first allocation or work there).
  /// Like cuCtxCreate on a full GPU, fails with MemoryAllocation when the context does not
  /// fit next to what every process on the node already uses there.
  Error ensure_context(int index);
  bool has_context(int index) const;
  /// cudaDeviceSynchronize: work on the thread's CUDA device, which needs its context.
  Error synchronize_current();

  /// Allocates through the device's caching allocator. The device must have its context
  /// (ensure_context). On failure returns nullptr and fills `oom_message` with the
  /// profile's PyTorch out-of-memory text.
  /// In a child forked after init it returns nullptr without touching the allocator (use
  /// fork_check first to tell the two apart).
  void* allocate(int index, std::size_t bytes, std::string* oom_message);
  /// Returns a block to the cache; in a child forked after init, nothing: the memory is the
  /// parent's, and the child never takes a lock another of the parent's threads may have
  /// held at the fork.
  void release(int index, void* ptr);
  /// Releases every cached block (nothing in a child forked after init).
  void empty_cache();
  AllocatorStats stats(int index) const;

  NodeState& state() { return *state_; }

 private:
  Driver();
  void* segment_malloc(int index, std::size_t bytes);
  void segment_free(int index, void* ptr, std::size_t bytes);
  ProcessUsage snapshot_locked() const;
  std::string out_of_memory_message(int index, std::size_t alloc_bytes);

  Node node_;
  Profile profile_;
  std::optional<std::string> cuda_visible_devices_;
  ContainerView container_;
  DeviceOrder order_ = DeviceOrder::FastestFirst;
  std::vector<VisibleDevice> devices_;
  std::unique_ptr<NodeState> state_;
  std::vector<std::unique_ptr<CachingAllocator>> allocators_;
  std::unique_ptr<std::atomic<bool>[]> contexts_;
  mutable std::mutex usage_mutex_;
  std::vector<std::uint64_t> used_bytes_;  // this process, per physical GPU
  std::uint64_t context_mask_ = 0;
  int mig_gpu_ = -1;       // the visible MIG instance, if any: its usage is in its slice
  int mig_instance_ = -1;
  int owner_pid_ = 0;  // the process that created the driver: a different getpid() is a fork
};

}  // namespace gpulab::sim
