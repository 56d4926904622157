// The simulated CUDA driver: one per process, created at the process's first CUDA use,
// like cuInit. It reads GPULAB_NODE, CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER exactly
// once, then owns the visible devices, the per-thread current device, the contexts and
// one caching allocator per device. Its API mirrors the CUDA runtime (cudaGetDeviceCount,
// cudaSetDevice, cudaMalloc...) and, like it, reports failures as error codes.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "caching_allocator.h"
#include "gpulab/node.h"
#include "gpulab/node_state.h"
#include "gpulab/visibility.h"

namespace gpulab::sim {

/// cudaError_t values the simulator can return, with CUDA's numbers.
enum class Error : int {
  Success = 0,
  InvalidValue = 1,
  MemoryAllocation = 2,
  NoDevice = 100,
  InvalidDevice = 101,
};

/// cudaGetErrorString's text for an error ("invalid device ordinal", ...).
const char* error_string(Error error);

class Driver {
 public:
  /// The process's driver, created on first call from the environment at that moment.
  /// Throws NodeError (or std::runtime_error) when the node or its state is unusable.
  static Driver& get();
  /// True once get() has succeeded: CUDA is initialised and the environment is frozen.
  static bool initialized();

  const Node& node() const { return node_; }
  const std::optional<std::string>& cuda_visible_devices() const { return cuda_visible_devices_; }
  DeviceOrder device_order() const { return order_; }
  int device_count() const { return static_cast<int>(devices_.size()); }
  const VisibleDevice& device(int index) const { return devices_.at(static_cast<std::size_t>(index)); }
  int physical_index(int index) const { return device(index).physical_index; }
  std::uint64_t total_bytes(int index) const;
  Error check_device(int index) const;

  /// The calling thread's current device; every thread starts on device 0.
  static int current_device();
  /// Makes `index` current for this thread without touching the device (what a device
  /// guard does in PyTorch >= 2.1: no context is created).
  Error select_device(int index);
  /// cudaSetDevice with CUDA 12 semantics: selects the device and creates its context.
  Error set_device(int index);
  /// Creates the device's primary context if it has none (first allocation or work there).
  /// Like cuCtxCreate on a full GPU, fails with MemoryAllocation when the context does not
  /// fit next to what every process on the node already uses there.
  Error ensure_context(int index);
  bool has_context(int index) const;
  /// cudaDeviceSynchronize on the current device: an unguarded call, so it creates a
  /// context there if there was none.
  Error synchronize_current();

  /// Allocates through the device's caching allocator (creating the context first). On
  /// failure returns nullptr and fills `oom_message` with PyTorch's out-of-memory text.
  void* allocate(int index, std::size_t bytes, std::string* oom_message);
  void release(int index, void* ptr);
  void empty_cache();
  AllocatorStats stats(int index) const;
  /// cudaMemGetInfo: free memory on the device counting every process on the node.
  Error mem_get_info(int index, std::uint64_t* free_bytes, std::uint64_t* total_bytes);

  NodeState& state() { return *state_; }

 private:
  Driver();
  void* segment_malloc(int index, std::size_t bytes);
  void segment_free(int index, void* ptr, std::size_t bytes);
  ProcessUsage snapshot_locked() const;
  std::string out_of_memory_message(int index, std::size_t alloc_bytes);

  Node node_;
  std::optional<std::string> cuda_visible_devices_;
  DeviceOrder order_ = DeviceOrder::FastestFirst;
  std::vector<VisibleDevice> devices_;
  std::unique_ptr<NodeState> state_;
  std::vector<std::unique_ptr<CachingAllocator>> allocators_;
  std::unique_ptr<std::atomic<bool>[]> contexts_;
  mutable std::mutex usage_mutex_;
  std::vector<std::uint64_t> used_bytes_;  // this process, per physical GPU
  std::uint64_t context_mask_ = 0;
};

}  // namespace gpulab::sim
