#include "driver.h"

#include <cstdlib>
#include <stdexcept>

#include <unistd.h>

#include "host_memory.h"
#include "model/cuda_messages.h"

namespace gpulab::sim {
namespace {
// cudaGetDevice's answer for this thread.
thread_local int t_cuda_device = 0;
// PyTorch >= 2.1's targetDeviceIndex: a device a guard restore only recorded, -1 if none.
thread_local int t_target_device = -1;
std::atomic<bool> g_initialized{false};
// The linked LibTorch's version, which the adapters report; 0.0.0 in torch-free tests.
std::atomic<int> g_torch_major{0};
std::atomic<int> g_torch_minor{0};
std::atomic<int> g_torch_patch{0};

std::optional<std::string> read_env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}
}  // namespace

const char* error_name(Error error) {
  switch (error) {
    case Error::Success: return "cudaSuccess";
    case Error::InvalidValue: return "cudaErrorInvalidValue";
    case Error::MemoryAllocation: return "cudaErrorMemoryAllocation";
    case Error::InitializationError: return "cudaErrorInitializationError";
    case Error::NoDevice: return "cudaErrorNoDevice";
    case Error::InvalidDevice: return "cudaErrorInvalidDevice";
  }
  return "cudaErrorUnknown";
}

const char* error_string(Error error) {
  switch (error) {
    case Error::Success: return "no error";
    case Error::InvalidValue: return "invalid argument";
    case Error::MemoryAllocation: return "out of memory";
    case Error::InitializationError: return "initialization error";
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

// CUDA's state does not survive fork(): a real child's CUDA calls fail with
// cudaErrorInitializationError ("initialization error"); see docs/reference.md.
bool Driver::forked_after_init() { return initialized() && getpid() != get().owner_pid_; }

Error Driver::fork_check() { return forked_after_init() ? Error::InitializationError : Error::Success; }

void Driver::set_torch_version(int major, int minor, int patch) {
  g_torch_major = major;
  g_torch_minor = minor;
  g_torch_patch = patch;
}

Profile Driver::current_profile() {
  if (initialized()) return get().profile();
  // The variable's old name chose a runtime major version, also for builds that never
  // shipped (1.13 on CUDA 12): say what replaced it rather than ignore it.
  if (const char* old = std::getenv("GPULAB_CUDA_RUNTIME"))
    throw std::invalid_argument(std::string("GPULAB_CUDA_RUNTIME=") + old +
                                " is no longer read: set GPULAB_CUDA_BUILD to one of the linked PyTorch's official CUDA "
                                "builds (e.g. 12.8), or unset it for PyPI's default build");
  return make_profile(g_torch_major, g_torch_minor, g_torch_patch, std::getenv("GPULAB_CUDA_BUILD"));
}

Driver::Driver()
    : node_(load_selected_node()),
      profile_(current_profile()),
      cuda_visible_devices_(read_env("CUDA_VISIBLE_DEVICES")),
      order_(parse_device_order(std::getenv("CUDA_DEVICE_ORDER"))) {
  // Inside a container (NVIDIA_VISIBLE_DEVICES) CUDA counts in the container's GPUs; the
  // devices keep host physical indices, so the shared node state stays the host's.
  container_ = current_container_view(node_);
  devices_ = visible_devices(node_, container_, cuda_visible_devices_, order_);
  for (const VisibleDevice& device : devices_) {
    if (device.mig_index < 0) continue;
    mig_gpu_ = device.physical_index;
    mig_instance_ = device.mig_index;
  }
  state_ = std::make_unique<NodeState>(node_);
  used_bytes_.assign(node_.gpus.size(), 0);
  contexts_ = std::make_unique<std::atomic<bool>[]>(devices_.size());
  for (int index = 0; index < device_count(); ++index) {
    contexts_[static_cast<std::size_t>(index)] = false;
    allocators_.push_back(std::make_unique<CachingAllocator>(
        [this, index](std::size_t bytes) { return segment_malloc(index, bytes); },
        [this, index](void* ptr, std::size_t bytes) { segment_free(index, ptr, bytes); }));
  }
  owner_pid_ = static_cast<int>(getpid());
  // Leave the node's view when the process ends normally; a killed process is noticed
  // by the others through its pid. A child forked after init inherits these handlers: it
  // has no record of its own and must neither touch the parent's nor take a lock.
  std::atexit([] {
    if (!Driver::forked_after_init()) Driver::get().state().withdraw();
  });
  // A prestarted lesson's run ends with quick_exit (report/lesson_writer.cpp): leave there too.
  std::at_quick_exit([] {
    if (!Driver::forked_after_init()) Driver::get().state().withdraw();
  });
  g_initialized.store(true, std::memory_order_release);
}

std::uint64_t Driver::capacity_bytes(int index) const { return gpulab::capacity_bytes(node_, device(index)); }

Error Driver::check_device(int index) const {
  if (getpid() != owner_pid_) return Error::InitializationError;
  if (devices_.empty()) return Error::NoDevice;
  if (index < 0 || index >= device_count()) return Error::InvalidDevice;
  return Error::Success;
}

Error Driver::cuda_set_device(int index) {
  if (const Error error = check_device(index); error != Error::Success) return error;
  t_cuda_device = index;
  return profile_.set_device_creates_context() ? ensure_context(index) : Error::Success;
}

int Driver::cuda_get_device() { return t_cuda_device; }

int Driver::current_device() { return t_target_device >= 0 ? t_target_device : t_cuda_device; }

Error Driver::set_device(int index) {
  if (const Error error = check_device(index); error != Error::Success) return error;
  t_target_device = -1;
  // torch.cuda.set_device: c10::cuda::set_device(index, force) with force=true from 2.8.
  if (profile_.set_device_skips_current(profile_.python_set_device_forces()) && index == t_cuda_device)
    return Error::Success;
  return cuda_set_device(index);
}

Error Driver::exchange_device(int index, int* previous) {
  if (const Error error = check_device(index); error != Error::Success) return error;
  *previous = current_device();
  // From 2.1 a recorded target device means the runtime is elsewhere: always switch.
  const bool recorded = t_target_device >= 0;
  t_target_device = -1;
  if (!recorded && index == t_cuda_device) return Error::Success;
  return cuda_set_device(index);
}

Error Driver::guard_set_device(int index) {
  if (const Error error = check_device(index); error != Error::Success) return error;
  t_target_device = -1;
  // c10::cuda::SetDevice: from 2.1 nothing when the runtime is on `index` already.
  if (profile_.set_device_skips_current(false) && index == t_cuda_device) return Error::Success;
  return cuda_set_device(index);
}

Error Driver::maybe_set_device(int index) {
  if (profile_.guard_restore_sets_device()) return guard_set_device(index);
  if (const Error error = check_device(index); error != Error::Success) return error;
  if (has_context(index)) return guard_set_device(index);
  t_target_device = index;
  return Error::Success;
}

Error Driver::maybe_exchange_device(int index, int* previous) {
  if (profile_.guard_restore_sets_device()) {
    *previous = current_device();
    return index == *previous ? Error::Success : maybe_set_device(index);
  }
  *previous = t_cuda_device;
  if (index == t_cuda_device) return Error::Success;  // a recorded device stays recorded
  if (const Error error = check_device(index); error != Error::Success) return error;
  if (!has_context(index)) {
    t_target_device = index;
    return Error::Success;
  }
  return cuda_set_device(index);  // it has its context: nothing new
}

bool Driver::has_context(int index) const {
  return check_device(index) == Error::Success && contexts_[static_cast<std::size_t>(index)].load();
}

ProcessUsage Driver::snapshot_locked() const {
  ProcessUsage usage;
  usage.used_bytes = used_bytes_;
  usage.context_mask = context_mask_;
  usage.mig_gpu = mig_gpu_;
  usage.mig_instance = mig_instance_;
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
    fits = state_->publish_if_fits(snapshot_locked(), physical, capacity_bytes(index), nullptr);
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

Error Driver::synchronize_current() { return ensure_context(cuda_get_device()); }

void* Driver::segment_malloc(int index, std::size_t bytes) {
  const int physical = physical_index(index);
  std::lock_guard<std::mutex> guard(usage_mutex_);
  auto& used = used_bytes_[static_cast<std::size_t>(physical)];
  used += bytes;
  bool fits = false;
  try {
    fits = state_->publish_if_fits(snapshot_locked(), physical, capacity_bytes(index), nullptr);
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
  if (forked_after_init()) return nullptr;
  std::size_t segment_bytes = 0;
  void* ptr = allocators_.at(static_cast<std::size_t>(index))->allocate(bytes, &segment_bytes);
  if (ptr != nullptr || oom_message == nullptr) return ptr;
  *oom_message = out_of_memory_message(index, segment_bytes);
  return nullptr;
}

// PyTorch's text (c10/cuda/CUDACachingAllocator.cpp) in the profile's form. "GPU N" is the
// CUDA index. From 2.1 it lists NVML's view of the GPU (reportProcessMemoryInfo): every
// process with memory or a context there — on a MIG instance, on that instance — this one
// named "Including non-PyTorch memory, this process", the others "Process <pid>". One
// snapshot of the node gives both the free memory and the list, so they agree.
std::string Driver::out_of_memory_message(int index, std::size_t alloc_bytes) {
  const int physical = physical_index(index);
  const int instance = device(index).mig_index;
  const int self = static_cast<int>(getpid());
  const AllocatorStats s = stats(index);
  OomFigures figures;
  figures.cuda_index = index;
  figures.tried = alloc_bytes;
  figures.total = capacity_bytes(index);
  figures.allocated = s.allocated_bytes;
  figures.reserved = s.reserved_bytes;
  std::uint64_t used = 0;
  for (const ProcessUsage& process : state_->processes()) {
    if (process.instance_on(physical) != instance) continue;
    const std::uint64_t bytes = process.used_bytes.at(static_cast<std::size_t>(physical));
    used += bytes;
    if (bytes == 0 && ((process.context_mask >> physical) & 1u) == 0) continue;
    figures.processes.push_back({process.pid, process.pid == self, bytes});
  }
  figures.free = used >= figures.total ? 0 : figures.total - used;
  return gpulab::out_of_memory_message(profile_, figures);
}

void Driver::release(int index, void* ptr) {
  if (forked_after_init()) return;
  allocators_.at(static_cast<std::size_t>(index))->release(ptr);
}

void Driver::empty_cache() {
  if (forked_after_init()) return;
  for (auto& allocator : allocators_) allocator->empty_cache();
}

AllocatorStats Driver::stats(int index) const { return allocators_.at(static_cast<std::size_t>(index))->stats(); }

}  // namespace gpulab::sim
