#include "driver.h"

#include <cstdlib>

#include <unistd.h>

#include "host_memory.h"

namespace gpulab::sim {
namespace {
thread_local int t_current_device = 0;
std::atomic<bool> g_initialized{false};

std::optional<std::string> read_env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}
}  // namespace

const char* error_string(Error error) {
  switch (error) {
    case Error::Success: return "no error";
    case Error::InvalidValue: return "invalid argument";
    case Error::MemoryAllocation: return "out of memory";
    case Error::NoDevice: return "no CUDA-capable device is detected";
    case Error::InvalidDevice: return "invalid device ordinal";
  }
  return "unknown error";
}

Driver& Driver::get() {
  // Deliberately never destroyed: tensors in static storage may be freed after main.
  static Driver* const driver = new Driver();
  return *driver;
}

bool Driver::initialized() { return g_initialized.load(std::memory_order_acquire); }

Driver::Driver()
    : node_(load_selected_node()),
      cuda_visible_devices_(read_env("CUDA_VISIBLE_DEVICES")),
      order_(parse_device_order(std::getenv("CUDA_DEVICE_ORDER"))) {
  devices_ = visible_devices(node_, cuda_visible_devices_, order_);
  state_ = std::make_unique<NodeState>(node_);
  used_bytes_.assign(node_.gpus.size(), 0);
  contexts_ = std::make_unique<std::atomic<bool>[]>(devices_.size());
  for (int index = 0; index < device_count(); ++index) {
    contexts_[static_cast<std::size_t>(index)] = false;
    allocators_.push_back(std::make_unique<CachingAllocator>(
        [this, index](std::size_t bytes) { return segment_malloc(index, bytes); },
        [this, index](void* ptr, std::size_t bytes) { segment_free(index, ptr, bytes); }));
  }
  // Leave the node's view when the process ends normally; a killed process is noticed
  // by the others through its pid.
  std::atexit([] { Driver::get().state().withdraw(); });
  g_initialized.store(true, std::memory_order_release);
}

std::uint64_t Driver::total_bytes(int index) const { return gpulab::total_bytes(node_, device(index)); }

Error Driver::check_device(int index) const {
  if (devices_.empty()) return Error::NoDevice;
  if (index < 0 || index >= device_count()) return Error::InvalidDevice;
  return Error::Success;
}

int Driver::current_device() { return t_current_device; }

Error Driver::select_device(int index) {
  if (const Error error = check_device(index); error != Error::Success) return error;
  t_current_device = index;
  return Error::Success;
}

Error Driver::set_device(int index) {
  if (const Error error = select_device(index); error != Error::Success) return error;
  return ensure_context(index);
}

bool Driver::has_context(int index) const {
  return check_device(index) == Error::Success && contexts_[static_cast<std::size_t>(index)].load();
}

ProcessUsage Driver::snapshot_locked() const {
  ProcessUsage usage;
  usage.used_bytes = used_bytes_;
  usage.context_mask = context_mask_;
  return usage;
}

Error Driver::ensure_context(int index) {
  if (const Error error = check_device(index); error != Error::Success) return error;
  auto& flag = contexts_[static_cast<std::size_t>(index)];
  if (flag.load(std::memory_order_acquire)) return Error::Success;
  std::lock_guard<std::mutex> guard(usage_mutex_);
  if (flag.load()) return Error::Success;
  const int physical = physical_index(index);
  const std::uint64_t bit = 1ull << physical;
  auto& used = used_bytes_[static_cast<std::size_t>(physical)];
  const std::uint64_t context = node_.gpus[static_cast<std::size_t>(physical)].context_bytes;
  used += context;
  context_mask_ |= bit;
  bool fits = false;
  try {
    // The context takes device memory: on a GPU that other processes filled, creating it
    // fails (CUDA_ERROR_OUT_OF_MEMORY) instead of pushing the node past its capacity.
    fits = state_->publish_if_fits(snapshot_locked(), physical, total_bytes(index), nullptr);
  } catch (...) {
    used -= context;
    context_mask_ &= ~bit;
    throw;
  }
  if (!fits) {
    used -= context;
    context_mask_ &= ~bit;
    return Error::MemoryAllocation;
  }
  flag.store(true, std::memory_order_release);
  return Error::Success;
}

Error Driver::synchronize_current() { return ensure_context(current_device()); }

void* Driver::segment_malloc(int index, std::size_t bytes) {
  const int physical = physical_index(index);
  std::lock_guard<std::mutex> guard(usage_mutex_);
  auto& used = used_bytes_[static_cast<std::size_t>(physical)];
  used += bytes;
  bool fits = false;
  try {
    fits = state_->publish_if_fits(snapshot_locked(), physical, total_bytes(index), nullptr);
  } catch (...) {
    used -= bytes;
    throw;
  }
  if (!fits) {
    used -= bytes;
    return nullptr;
  }
  void* ptr = map_host_memory(bytes);
  if (ptr == nullptr) {  // the host itself refused: report it as device OOM
    used -= bytes;
    state_->publish(snapshot_locked());
  }
  return ptr;
}

void Driver::segment_free(int index, void* ptr, std::size_t bytes) {
  unmap_host_memory(ptr, bytes);
  std::lock_guard<std::mutex> guard(usage_mutex_);
  used_bytes_[static_cast<std::size_t>(physical_index(index))] -= bytes;
  state_->publish(snapshot_locked());
}

void* Driver::allocate(int index, std::size_t bytes, std::string* oom_message) {
  if (const Error error = ensure_context(index); error != Error::Success) {
    // The implicit context of a first cudaMalloc did not fit: PyTorch sees a failed
    // cudaMalloc, i.e. its out-of-memory error for the segment it wanted.
    if (error == Error::MemoryAllocation && oom_message != nullptr)
      *oom_message = out_of_memory_message(
          index, CachingAllocator::segment_size(CachingAllocator::round_size(bytes)));
    return nullptr;
  }
  std::size_t segment_bytes = 0;
  void* ptr = allocators_[static_cast<std::size_t>(index)]->allocate(bytes, &segment_bytes);
  if (ptr != nullptr || oom_message == nullptr) return ptr;
  *oom_message = out_of_memory_message(index, segment_bytes);
  return nullptr;
}

// PyTorch's text (c10/cuda/CUDACachingAllocator.cpp, >= 2.1). "GPU N" is the CUDA index;
// the process list is NVML's view of the physical GPU (reportProcessMemoryInfo): every
// process with memory or a context there, this one named "Including non-PyTorch memory,
// this process", the others "Process <pid>". One snapshot of the node gives both the free
// memory and the list, so they agree.
std::string Driver::out_of_memory_message(int index, std::size_t alloc_bytes) {
  const std::size_t physical = static_cast<std::size_t>(physical_index(index));
  const std::uint64_t total = total_bytes(index);
  const int self = static_cast<int>(getpid());
  std::uint64_t used = 0;
  std::string processes;
  for (const ProcessUsage& process : state_->processes()) {
    const std::uint64_t bytes = process.used_bytes.at(physical);
    used += bytes;
    if (bytes == 0 && ((process.context_mask >> physical) & 1u) == 0) continue;
    processes += process.pid == self ? std::string("Including non-PyTorch memory, this process")
                                     : "Process " + std::to_string(process.pid);
    processes += " has " + format_size(bytes) + " memory in use. ";
  }
  const std::uint64_t free_bytes = used >= total ? 0 : total - used;
  const AllocatorStats s = stats(index);
  return "CUDA out of memory. Tried to allocate " + format_size(alloc_bytes) + ". GPU " + std::to_string(index) +
         " has a total capacity of " + format_size(total) + " of which " + format_size(free_bytes) + " is free. " +
         processes + "Of the allocated memory " + format_size(s.allocated_bytes) + " is allocated by PyTorch, and " +
         format_size(s.reserved_bytes - s.allocated_bytes) +
         " is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try "
         "setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
         "documentation for Memory Management  "
         "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)";
}

void Driver::release(int index, void* ptr) { allocators_.at(static_cast<std::size_t>(index))->release(ptr); }

void Driver::empty_cache() {
  for (auto& allocator : allocators_) allocator->empty_cache();
}

AllocatorStats Driver::stats(int index) const { return allocators_.at(static_cast<std::size_t>(index))->stats(); }

Error Driver::mem_get_info(int index, std::uint64_t* free_bytes, std::uint64_t* total) {
  if (const Error error = check_device(index); error != Error::Success) return error;
  const std::uint64_t capacity = total_bytes(index);
  const std::uint64_t used = state_->used_bytes(physical_index(index));
  *total = capacity;
  *free_bytes = used >= capacity ? 0 : capacity - used;
  return Error::Success;
}

}  // namespace gpulab::sim
