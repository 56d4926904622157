// gpulab::cuda::get_device_properties on the simulated node: the node file's figures for
// the visible device (a MIG instance has its own memory and SMs).
#include <c10/util/Exception.h>

#include "SimErrors.h"
#include "gpulab/cuda.h"
#include "gpulab/visibility.h"

namespace gpulab::cuda {

DeviceProperties get_device_properties(int index) {
  const sim::Driver& driver = sim::driver();
  const int count = driver.device_count();
  TORCH_CHECK(index >= 0 && index < count, "Invalid device id ", index, ": this process sees ", count, " GPU(s)");
  const VisibleDevice& device = driver.device(index);
  const Gpu& gpu = driver.node().gpus.at(static_cast<std::size_t>(device.physical_index));
  const int sm_count =
      device.mig_index >= 0 ? gpu.mig.at(static_cast<std::size_t>(device.mig_index)).sm_count : gpu.sm_count;
  return {gpu.name, driver.capacity_bytes(index), sm_count, gpu.cc_major, gpu.cc_minor};
}

}  // namespace gpulab::cuda
