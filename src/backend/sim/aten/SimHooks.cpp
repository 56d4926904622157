// CUDAHooksInterface: what ATen asks of "the CUDA library" (device count, generators,
// allocators, contexts). Registered under the key ATen looks up, "CUDAHooks".
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/DeviceGuard.h>

#include <mutex>

#include "SimAllocator.h"
#include "SimErrors.h"
#include "backend/torch_compat.h"

namespace gpulab::sim {
namespace {

struct SimCudaHooks final : public at::CUDAHooksInterface {
  explicit SimCudaHooks(at::CUDAHooksArgs) {}

  void GPULAB_HOOKS_INIT() const override { TORCH_CHECK(driver().device_count() > 0, "No CUDA GPUs are available"); }
  bool hasCUDA() const override { return driver().device_count() > 0; }
  int getNumGPUs() const override { return driver().device_count(); }
  GPULAB_HOOKS_INDEX current_device() const override {
    return static_cast<GPULAB_HOOKS_INDEX>(sim::current_device());
  }

  /// Random ops run on the host, so each device's generator is a CPU generator;
  /// torch::manual_seed seeds them all, which keeps runs reproducible.
  const at::Generator& GPULAB_HOOKS_DEFAULT_GENERATOR(c10::DeviceIndex index) const override {
    static std::once_flag once;
    static std::vector<at::Generator> generators;
    std::call_once(once, [] {
      for (int i = 0; i < driver().device_count(); ++i)
        generators.push_back(at::make_generator<at::CPUGeneratorImpl>(c10::default_rng_seed_val));
    });
    const int resolved = index < 0 ? current_device() : index;
    check(driver().check_device(resolved));
    return generators[static_cast<std::size_t>(resolved)];
  }

  c10::Device getDeviceFromPtr(void*) const override {
    return {c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(current_device())};
  }
  bool hasPrimaryContext(GPULAB_HOOKS_INDEX index) const override {
    return driver().has_context(static_cast<int>(index));
  }
  /// Pinned host memory is plain host memory here.
  c10::Allocator* getPinnedMemoryAllocator() const override { return c10::GetCPUAllocator(); }
  c10::Allocator* getCUDADeviceAllocator() const override { return &cuda_allocator(); }
  /// As PyTorch's: a device guard for `index`, then cudaDeviceSynchronize on the thread's
  /// device. -1 means no guard: the current device, which gets a context if it had none.
  void deviceSynchronize(GPULAB_HOOKS_INDEX index) const override {
    driver();
    c10::OptionalDeviceGuard guard;
    if (index >= 0) guard.reset_device(c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(index)));
    check(Driver::get().synchronize_current());
  }
  bool hasCUDART() const override { return true; }
  /// The profile's runtime, as cudaRuntimeGetVersion encodes it (12.0 -> 12000).
  long versionCUDART() const override {  // CUDART_VERSION's form: 13020 for CUDA 13.2
    const CudaVersion cuda = Driver::current_profile().cuda;
    return 1000L * cuda.major + 10L * cuda.minor;
  }
  std::string showConfig() const override {
    return "gpulab simulated CUDA backend on node '" + driver().node().name + "'\n";
  }
#if GPULAB_TORCH_AT_LEAST(2, 4)
  // AcceleratorHooksInterface's device API; torch::cuda::device_count() asks deviceCount().
  c10::DeviceIndex deviceCount() const override { return static_cast<c10::DeviceIndex>(driver().device_count()); }
  c10::DeviceIndex getCurrentDevice() const override { return static_cast<c10::DeviceIndex>(current_device()); }
  void setCurrentDevice(c10::DeviceIndex index) const override { check(driver().guard_set_device(index)); }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex index) const override {
    int previous = 0;
    check(driver().exchange_device(index, &previous));
    return static_cast<c10::DeviceIndex>(previous);
  }
  /// c10::cuda::MaybeExchangeDevice: switches like a guard's restore (no context where none
  /// is), but reads the runtime's device, as 2.15's libc10_cuda.so does (Driver::maybe_exchange_device).
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex index) const override {
    int previous = 0;
    check(driver().maybe_exchange_device(index, &previous));
    return static_cast<c10::DeviceIndex>(previous);
  }
#endif
#if GPULAB_TORCH_AT_LEAST(2, 7)
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return hasCUDA(); }
  at::Generator getNewGenerator(c10::DeviceIndex) const override {
    return at::make_generator<at::CPUGeneratorImpl>(c10::default_rng_seed_val);
  }
#endif
};

}  // namespace
}  // namespace gpulab::sim

// ---- registration ----------------------------------------------------------------------
namespace at {
C10_REGISTER_TYPED_CLASS(CUDAHooksRegistry, "CUDAHooks", gpulab::sim::SimCudaHooks);
}  // namespace at
