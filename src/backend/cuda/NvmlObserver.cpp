// The observer on real GPUs: NVML, which nvidia-smi itself uses. libnvidia-ml.so.1 comes
// with the NVIDIA driver, so it is opened at run time (dlopen): gpulab builds and links
// on machines without a driver, and says what is missing where one is needed.
//
// NVML numbers GPUs in PCI bus order and ignores CUDA_VISIBLE_DEVICES, which makes its
// index the physical index. Listing GPUs never initialises CUDA in this process (that
// would freeze CUDA_VISIBLE_DEVICES); only physical_index() asks CUDA, for a device of
// a process that has initialised CUDA already.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <tuple>

#include <cuda_runtime_api.h>

#define NVML_NO_UNVERSIONED_FUNC_DEFS
#include <nvml.h>

#include "gpulab/observe.h"
#include "backend/cuda/uuid_text.h"

namespace gpulab {
namespace {

// ---- libnvidia-ml.so.1, opened at run time -------------------------------------------

class Nvml {
 public:
  using Init = nvmlReturn_t (*)();
  using ErrorString = const char* (*)(nvmlReturn_t);
  using DeviceCount = nvmlReturn_t (*)(unsigned int*);
  using HandleByIndex = nvmlReturn_t (*)(unsigned int, nvmlDevice_t*);
  using Text = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int);
  using PciInfo = nvmlReturn_t (*)(nvmlDevice_t, nvmlPciInfo_t*);
  using MemoryInfo = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*);
  using ProcessesV2 = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, nvmlProcessInfo_v2_t*);
  using ProcessesV1 = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, nvmlProcessInfo_v1_t*);
  using ProcessName = nvmlReturn_t (*)(unsigned int, char*, unsigned int);

  /// The initialised library; throws std::runtime_error saying what is missing.
  static Nvml& get() {
    static std::once_flag once;
    static std::unique_ptr<Nvml> nvml;
    static std::string failure;
    std::call_once(once, [] {
      try {
        nvml.reset(new Nvml());
      } catch (const std::exception& error) {
        failure = error.what();
      }
    });
    if (!nvml) throw std::runtime_error(failure);
    return *nvml;
  }

  Init init = nullptr;
  ErrorString error_string = nullptr;
  DeviceCount device_count = nullptr;
  HandleByIndex handle_by_index = nullptr;
  Text name = nullptr;
  Text uuid = nullptr;
  PciInfo pci_info = nullptr;
  MemoryInfo memory_info = nullptr;
  ProcessesV2 compute_processes = nullptr;   // _v3, else _v2 (same record)
  ProcessesV1 compute_processes_v1 = nullptr;  // drivers before R470
  ProcessesV2 graphics_processes = nullptr;
  ProcessName process_name = nullptr;

  void check(nvmlReturn_t result, const char* call) const {
    if (result == NVML_SUCCESS) return;
    throw std::runtime_error(std::string("NVML: ") + call + " failed: " + error_string(result));
  }

 private:
  Nvml() {
    handle_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) {
      const char* why = dlerror();
      throw std::runtime_error(
          std::string("NVML: libnvidia-ml.so.1, which comes with the NVIDIA driver, could not be loaded (") +
          (why != nullptr ? why : "unknown error") +
          "). Is the driver installed (does nvidia-smi work)? On a machine without NVIDIA GPUs, build gpulab "
          "with GPULAB_BACKEND=sim.");
    }
    required(init, "nvmlInit_v2");
    required(error_string, "nvmlErrorString");
    required(device_count, "nvmlDeviceGetCount_v2");
    required(handle_by_index, "nvmlDeviceGetHandleByIndex_v2");
    required(name, "nvmlDeviceGetName");
    required(uuid, "nvmlDeviceGetUUID");
    if (!optional(pci_info, "nvmlDeviceGetPciInfo_v3")) required(pci_info, "nvmlDeviceGetPciInfo_v2");
    required(memory_info, "nvmlDeviceGetMemoryInfo");
    if (!optional(compute_processes, "nvmlDeviceGetComputeRunningProcesses_v3") &&
        !optional(compute_processes, "nvmlDeviceGetComputeRunningProcesses_v2"))
      required(compute_processes_v1, "nvmlDeviceGetComputeRunningProcesses");
    if (!optional(graphics_processes, "nvmlDeviceGetGraphicsRunningProcesses_v3"))
      optional(graphics_processes, "nvmlDeviceGetGraphicsRunningProcesses_v2");
    optional(process_name, "nvmlSystemGetProcessName");
    const nvmlReturn_t result = init();
    if (result != NVML_SUCCESS)
      throw std::runtime_error(std::string("NVML: nvmlInit failed: ") +
                               error_string(result) + " (does nvidia-smi work?)");
  }

  template <typename Fn>
  bool optional(Fn& fn, const char* symbol) {
    fn = reinterpret_cast<Fn>(dlsym(handle_, symbol));
    return fn != nullptr;
  }
  template <typename Fn>
  void required(Fn& fn, const char* symbol) {
    if (!optional(fn, symbol))
      throw std::runtime_error(std::string("NVML: libnvidia-ml.so.1 has no ") + symbol +
                               "; the NVIDIA driver is too old");
  }

  void* handle_ = nullptr;  // kept open for the life of the process, like nvmlInit's state
};

// ---- PCI bus ids ----------------------------------------------------------------------

/// domain, bus, device, function: NVML prints "00000000:3D:00.0", CUDA "0000:3d:00.0".
using PciAddress = std::tuple<unsigned, unsigned, unsigned, unsigned>;

std::optional<PciAddress> parse_pci(const std::string& text) {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  if (std::sscanf(text.c_str(), "%x:%x:%x.%x", &domain, &bus, &device, &function) != 4) return std::nullopt;
  return PciAddress{domain, bus, device, function};
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

std::string name_of_process(const Nvml& nvml, unsigned pid) {
  if (nvml.process_name != nullptr) {
    char name[256] = {};
    if (nvml.process_name(pid, name, sizeof name) == NVML_SUCCESS && name[0] != '\0') {
      std::string path = name;
      return path.substr(path.rfind('/') + 1);
    }
  }
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  if (std::getline(comm, name) && !name.empty()) return name;
  return "?";
}

/// Whether a pid NVML reports is a process this process can see. NVML reports pids of
/// the host's pid namespace; inside a container they are not ours.
bool visible_process(unsigned pid) {
  return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

// ---- the observer -----------------------------------------------------------------------

class NvmlObserver final : public Observer {
 public:
  Backend backend() const override { return Backend::kCuda; }
  std::string node() const override { return host_name(); }

  std::vector<GpuView> gpus() override {
    Nvml& nvml = Nvml::get();
    unsigned count = 0;
    nvml.check(nvml.device_count(&count), "nvmlDeviceGetCount");
    std::vector<GpuView> views;
    std::vector<std::vector<std::pair<unsigned, std::uint64_t>>> usage;  // per GPU: pid, bytes
    for (unsigned index = 0; index < count; ++index) {
      nvmlDevice_t device = nullptr;
      nvml.check(nvml.handle_by_index(index, &device), "nvmlDeviceGetHandleByIndex");
      GpuView view;
      view.physical_index = static_cast<int>(index);
      char text[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
      nvml.check(nvml.name(device, text, sizeof text), "nvmlDeviceGetName");
      view.name = text;
      nvml.check(nvml.uuid(device, text, sizeof text), "nvmlDeviceGetUUID");
      view.uuid = text;
      nvmlPciInfo_t pci{};
      nvml.check(nvml.pci_info(device, &pci), "nvmlDeviceGetPciInfo");
      view.pci_bus_id = pci.busId;
      nvmlMemory_t memory{};
      nvml.check(nvml.memory_info(device, &memory), "nvmlDeviceGetMemoryInfo");
      view.total_bytes = memory.total;
      view.used_bytes = memory.used;  // what nvidia-smi's Memory-Usage shows
      views.push_back(std::move(view));
      usage.push_back(processes(nvml, device));
    }
    attribute(nvml, views, usage);
    return views;
  }

  int cuda_device_count() override {
    int count = 0;
    return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;  // c10::cuda::device_count's 0 on failure
  }

  int physical_index(int cuda_index) override {
    char bus_id[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE] = {};
    const cudaError_t status = cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, cuda_index);
    if (status != cudaSuccess) throw std::runtime_error(std::string("CUDA error: ") + cudaGetErrorString(status));
    const std::vector<GpuView> all = listing();
    // By PCI address (a MIG instance maps to its parent GPU), else by UUID.
    if (const auto wanted = parse_pci(bus_id))
      for (const GpuView& gpu : all)
        if (parse_pci(gpu.pci_bus_id) == wanted) return gpu.physical_index;
    cudaDeviceProp properties{};
    if (cudaGetDeviceProperties(&properties, cuda_index) == cudaSuccess) {
      const std::string uuid = uuid_text(properties.uuid);
      for (const GpuView& gpu : all)
        if (gpu.uuid == uuid) return gpu.physical_index;
    }
    throw std::runtime_error("gpulab: CUDA device " + std::to_string(cuda_index) + " (PCI " + bus_id +
                             ") is none of the GPUs NVML lists");
  }

 private:
  // The GPUs without their processes, listed once (they do not change while we run).
  const std::vector<GpuView>& listing() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (listing_.empty()) listing_ = gpus();
    return listing_;
  }

  /// Every compute (and graphics) process on the device with its memory; the same pid
  /// twice (a C+G process) is counted once.
  static std::vector<std::pair<unsigned, std::uint64_t>> processes(const Nvml& nvml, nvmlDevice_t device) {
    std::map<unsigned, std::uint64_t> bytes;
    auto add = [&bytes](unsigned pid, unsigned long long used) {
      // NVML_VALUE_NOT_AVAILABLE: no per-process figure (e.g. MIG without privileges).
      const std::uint64_t known = used == static_cast<unsigned long long>(NVML_VALUE_NOT_AVAILABLE) ? 0 : used;
      bytes[pid] = std::max(bytes[pid], known);
    };
    if (nvml.compute_processes != nullptr) {
      for (const auto& p : query<nvmlProcessInfo_v2_t>(nvml, nvml.compute_processes, device)) add(p.pid, p.usedGpuMemory);
    } else {
      for (const auto& p : query<nvmlProcessInfo_v1_t>(nvml, nvml.compute_processes_v1, device)) add(p.pid, p.usedGpuMemory);
    }
    if (nvml.graphics_processes != nullptr)
      for (const auto& p : query<nvmlProcessInfo_v2_t>(nvml, nvml.graphics_processes, device)) add(p.pid, p.usedGpuMemory);
    return {bytes.begin(), bytes.end()};
  }

  /// One nvmlDevice*RunningProcesses call, growing the buffer while processes appear.
  template <typename Info, typename Fn>
  static std::vector<Info> query(const Nvml& nvml, Fn fn, nvmlDevice_t device) {
    std::vector<Info> infos(16);
    for (;;) {
      unsigned count = static_cast<unsigned>(infos.size());
      const nvmlReturn_t result = fn(device, &count, infos.data());
      if (result == NVML_ERROR_INSUFFICIENT_SIZE) {
        infos.resize(static_cast<std::size_t>(count) + 8);
        continue;
      }
      if (result == NVML_ERROR_NOT_SUPPORTED || result == NVML_ERROR_NO_PERMISSION) return {};
      nvml.check(result, "nvmlDeviceGet*RunningProcesses");
      infos.resize(count);
      return infos;
    }
  }

  /// Fills each GPU's process table and this process's share. NVML reports host pids; in a
  /// container with its own pid namespace this process's pid is not among them. With
  /// GPULAB_NVML_SELF=unseen (tools/device-check.sh sets it on a GPU it found idle) every
  /// process this process cannot see is taken to be this one.
  static void attribute(const Nvml& nvml, std::vector<GpuView>& views,
                        const std::vector<std::vector<std::pair<unsigned, std::uint64_t>>>& usage) {
    const unsigned self = static_cast<unsigned>(getpid());
    bool listed = false;
    for (const auto& gpu : usage)
      for (const auto& [pid, used] : gpu) listed = listed || pid == self;
    const char* mode = std::getenv("GPULAB_NVML_SELF");
    const bool unseen_is_self = !listed && mode != nullptr && std::string(mode) == "unseen";
    for (std::size_t p = 0; p < views.size(); ++p) {
      for (const auto& [pid, used] : usage[p]) {
        const bool is_self = pid == self || (unseen_is_self && !visible_process(pid));
        views[p].processes.push_back({static_cast<int>(pid), is_self && pid != self ? "(this process)" : name_of_process(nvml, pid), used});
        if (is_self) {
          views[p].this_process_bytes += used;
          views[p].this_process_context = true;
        }
      }
    }
  }

  std::mutex mutex_;
  std::vector<GpuView> listing_;
};

}  // namespace

std::unique_ptr<Observer> make_observer() { return std::make_unique<NvmlObserver>(); }

}  // namespace gpulab
