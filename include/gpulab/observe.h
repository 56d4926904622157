// Observing GPUs from outside a program's own claims, the way nvidia-smi does: which
// physical GPU holds memory of which process. On the simulated node the observer reads
// the node's shared state; on real GPUs it asks NVML.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace c10 {
struct Device;
}
namespace at {
class Tensor;
}

namespace gpulab {

/// One process's footprint on one physical GPU (an nvidia-smi process-table row).
struct ProcessOnGpu {
  int pid = 0;                 ///< its process id
  std::string name;            ///< its program name
  std::uint64_t used_bytes = 0;  ///< context + reserved memory on this GPU
  int gpu_instance = -1;       ///< on a MIG GPU, the instance it uses (NVML's GI/CI ids)
  int compute_instance = -1;   ///< with gpu_instance, the MIG instance; -1 off MIG
};

/// One physical GPU as nvidia-smi shows it. Indices are physical (PCI bus order).
struct GpuView {
  int physical_index = 0;      ///< nvidia-smi's index
  std::string uuid;            ///< "GPU-…"
  std::string name;            ///< the product name
  std::string pci_bus_id;      ///< "00000000:07:00.0"
  std::uint64_t total_bytes = 0;  ///< nvidia-smi's total memory
  std::uint64_t used_bytes = 0;              ///< all processes
  std::uint64_t this_process_bytes = 0;      ///< the observing process only
  bool this_process_context = false;         ///< the observing process has a context here
  std::vector<ProcessOnGpu> processes;  ///< nvidia-smi's process table for this GPU
};

/// What runs CUDA under the lesson programs: the simulated node, or real GPUs.
enum class Backend { kSim, kCuda };

/// The backend's name in documents and on screen: "sim" or "cuda".
inline const char* backend_name(Backend backend) { return backend == Backend::kSim ? "sim" : "cuda"; }

/// The backend a document names, if it names one of the two.
inline std::optional<Backend> backend_named(const std::string& name) {
  if (name == "sim") return Backend::kSim;
  if (name == "cuda") return Backend::kCuda;
  return std::nullopt;
}

/// Sees the node from outside, as nvidia-smi does: the simulated node's shared state, or
/// NVML on real GPUs. make_observer() gives this build's.
class Observer {
 public:
  virtual ~Observer() = default;
  /// The simulated node, or real GPUs (NVML).
  virtual Backend backend() const = 0;
  /// The simulated node's name, or the host name on real GPUs.
  virtual std::string node() const = 0;
  /// Every physical GPU with every process's usage. Never initialises CUDA in the
  /// calling process, so observing does not freeze CUDA_VISIBLE_DEVICES.
  virtual std::vector<GpuView> gpus() = 0;
  /// How many CUDA devices this process sees, as torch::cuda::device_count() counts them
  /// (0 when CUDA cannot start). Initialises CUDA in the calling process.
  virtual int cuda_device_count() = 0;
  /// The physical GPU behind a CUDA device index of this process (CUDA must be initialised).
  virtual int physical_index(int cuda_index) = 0;
};

/// The observer for this build: simulated node or NVML.
std::unique_ptr<Observer> make_observer();

/// The physical GPU (nvidia-smi index) a tensor's memory is on; -1 for a non-CUDA tensor.
int physical_index_of(const at::Tensor& tensor);
/// The physical GPU a CUDA device of this process is; -1 for a non-CUDA device.
int physical_index_of(const c10::Device& device);

}  // namespace gpulab
