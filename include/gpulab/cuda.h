// The few CUDA calls LibTorch's portable C++ API lacks (torch.cuda.set_device and friends).
// On real GPUs they are c10::cuda's functions; on the simulated node, the simulator's.
// Lesson code uses these and plain LibTorch only.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

/// torch.cuda's Python-only helpers for C++ (set_device, current_device, properties, …).
namespace gpulab::cuda {

/// Python's torch.cuda.set_device (not C++'s c10::cuda::set_device, which differs from
/// 2.8): makes `index` this thread's current device. On CUDA 12 and later builds its
/// cudaSetDevice creates the device's context at once; on CUDA 11 it does not. In 2.1 to
/// 2.7 it does nothing when `index` is current already (set_device(0) on a fresh thread);
/// from 2.8 Python passes force=true, so it always calls cudaSetDevice. Throws
/// "CUDA error: invalid device ordinal".
void set_device(int index);

/// torch.cuda.current_device: this thread's current device (0 on every new thread).
int current_device();

/// torch.cuda.memory_allocated: bytes of live tensors on the device (-1: current).
std::uint64_t memory_allocated(int index = -1);

/// torch.cuda.memory_reserved: bytes the caching allocator holds on the device.
std::uint64_t memory_reserved(int index = -1);

/// torch.cuda.empty_cache: returns cached, unused blocks to the device.
void empty_cache();

/// What torch.cuda.get_device_properties reports: the fields DataParallel's balance check
/// reads, and those that name the physical GPU (cudaDeviceProp's uuid and PCI location,
/// which nvidia-smi shows too).
struct DeviceProperties {
  std::string name;               ///< the product name, "NVIDIA A100-SXM4-80GB"
  std::uint64_t total_memory = 0;  ///< bytes
  int multi_processor_count = 0;  ///< SMs: what DataParallel's balance check compares
  int major = 0;  ///< compute capability, major
  int minor = 0;  ///< compute capability, minor
  std::string uuid;   ///< "GPU-xxxxxxxx-…" ("MIG-…" for a MIG instance), as `nvidia-smi -L` prints it
  int pci_domain_id = 0;  ///< cudaDeviceProp::pciDomainID
  int pci_bus_id = 0;     ///< cudaDeviceProp::pciBusID: nvidia-smi's "00000000:07:00.0" is bus 0x07
  int pci_device_id = 0;  ///< cudaDeviceProp::pciDeviceID
};

/// torch.cuda.get_device_properties(index). Initialises CUDA; an index this process cannot
/// see throws "Invalid device id" (Python raises AssertionError with that text).
DeviceProperties get_device_properties(int index);

/// A GPU's PCI location: domain, bus and device, compared as numbers. nvidia-smi writes it
/// "00000000:3D:00.0" (an 8-digit domain, upper case), CUDA's cudaDeviceGetPCIBusId
/// "0000:3d:00.0": the same GPU, different text.
struct PciAddress {
  unsigned domain = 0;  ///< the PCI domain (nvidia-smi's first 8 hex digits)
  unsigned bus = 0;     ///< the bus: "3D" in 00000000:3D:00.0
  unsigned device = 0;  ///< the device on that bus: two GPUs may share a bus
  /// The same GPU: domain, bus and device equal.
  friend bool operator==(const PciAddress& a, const PciAddress& b) {
    return a.domain == b.domain && a.bus == b.bus && a.device == b.device;
  }
  /// Different GPUs.
  friend bool operator!=(const PciAddress& a, const PciAddress& b) { return !(a == b); }
};

/// "00000000:3D:00.0" or "0000:3d:00.0" (hexadecimal domain:bus:device.function); nullopt
/// when `text` is not one.
inline std::optional<PciAddress> parse_pci_address(const std::string& text) {
  PciAddress address;
  unsigned function = 0;
  if (std::sscanf(text.c_str(), "%x:%x:%x.%x", &address.domain, &address.bus, &address.device, &function) != 4)
    return std::nullopt;
  return address;
}

/// The PCI location in a GPU's properties (cudaDeviceProp's pciDomainID, pciBusID, pciDeviceID).
inline PciAddress pci_address_of(const DeviceProperties& properties) {
  return {static_cast<unsigned>(properties.pci_domain_id), static_cast<unsigned>(properties.pci_bus_id),
          static_cast<unsigned>(properties.pci_device_id)};
}

}  // namespace gpulab::cuda
