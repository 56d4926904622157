// gpulab::cuda::get_device_properties on the simulated node: the node file's figures for
// the visible device (a MIG instance has its own memory and SMs).
#include <cstdio>

#include <c10/util/Exception.h>

#include "SimErrors.h"
#include "gpulab/cuda.h"
#include "model/visibility.h"

namespace gpulab::cuda {

DeviceProperties get_device_properties(int index) {
  const sim::Driver& driver = sim::driver();
  const int count = driver.device_count();
  TORCH_CHECK(index >= 0 && index < count, "Invalid device id ", index, ": this process sees ", count, " GPU(s)");
  const VisibleDevice& device = driver.device(index);
  const Gpu& gpu = driver.node().gpus.at(static_cast<std::size_t>(device.physical_index));
  const int sm_count =
      device.mig_index >= 0 ? gpu.mig.at(static_cast<std::size_t>(device.mig_index)).sm_count : gpu.sm_count;
  DeviceProperties properties;
  properties.name = gpu.name;
  properties.total_memory = driver.capacity_bytes(index);
  properties.multi_processor_count = sm_count;
  properties.major = gpu.cc_major;
  properties.minor = gpu.cc_minor;
  properties.uuid = device.mig_index >= 0 ? gpu.mig.at(static_cast<std::size_t>(device.mig_index)).uuid : gpu.uuid;
  unsigned domain = 0, bus = 0, slot = 0, function = 0;  // the node file's "00000000:07:00.0"
  if (std::sscanf(gpu.pci_bus_id.c_str(), "%x:%x:%x.%x", &domain, &bus, &slot, &function) == 4) {
    properties.pci_domain_id = static_cast<int>(domain);
    properties.pci_bus_id = static_cast<int>(bus);
    properties.pci_device_id = static_cast<int>(slot);
  }
  return properties;
}

}  // namespace gpulab::cuda
