// DeviceGuardImplInterface for DeviceType::CUDA: the per-thread current device that
// c10::DeviceGuard, the op guards of SimKernels/SimFallback and autograd's device threads
// switch. Like PyTorch's CUDAGuardImpl it calls c10::cuda's device functions — here the
// driver's, which follow the software profile: entering a guard for another device is a
// cudaSetDevice (a context on CUDA 12); leaving it restores with cudaSetDevice before
// PyTorch 2.1 and in CUDA 11 builds, and with MaybeSetDevice from 2.1 on CUDA 12+
// (docs/reference.md, "Profiles"). As read from the releases: 2.15's CUDAGuardImpl.h calls
// c10::cuda::ExchangeDevice, SetDevice and MaybeSetDevice, whose code in its libc10_cuda.so
// Driver::exchange_device, guard_set_device and maybe_set_device follow; 1.13.1's header
// calls cudaGetDevice and cudaSetDevice itself.
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "SimDevice.h"
#include "SimErrors.h"
#include "backend/torch_compat.h"

namespace gpulab::sim {
namespace {

struct SimCudaGuardImpl final : public c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return c10::DeviceType::CUDA; }

  /// Must check the target: an invalid ordinal raises CUDA's error, as cudaSetDevice would.
  c10::Device exchangeDevice(c10::Device device) const override {
    int previous = 0;
    check(driver().exchange_device(device.index(), &previous));
    return cuda(previous);
  }
  c10::Device getDevice() const override {
    driver();  // like cudaGetDevice, initialises CUDA
    return cuda(current_device());
  }
  void setDevice(c10::Device device) const override { check(driver().guard_set_device(device.index())); }
  /// Must not throw: used by guard destructors. PyTorch only warns when it fails.
  void uncheckedSetDevice(c10::Device device) const noexcept override {
    if (Driver::initialized()) (void)Driver::get().maybe_set_device(device.index());
  }
  c10::Stream getStream(c10::Device device) const noexcept override {
    return c10::Stream(c10::Stream::DEFAULT, device);
  }
  /// Autograd asks for it when a gradient crosses devices (InputBuffer::add, e.g. the
  /// backward of a copy from cuda:3 to cuda:2, as in DataParallel).
  c10::Stream getDefaultStream(c10::Device device) const override { return c10::Stream(c10::Stream::DEFAULT, device); }
  c10::Stream exchangeStream(c10::Stream stream) const noexcept override {
    return c10::Stream(c10::Stream::DEFAULT, stream.device());
  }
  /// Must not throw; a broken node counts as no device (the error surfaces on first use).
  c10::DeviceIndex deviceCount() const noexcept override {
    try {
      return static_cast<c10::DeviceIndex>(Driver::get().device_count());
    } catch (...) {
      return 0;
    }
  }
  // Work runs synchronously on the host: streams and events are always complete.
  bool queryStream(const c10::Stream&) const override { return true; }
  void synchronizeStream(const c10::Stream&) const override {}
  void record(void**, const c10::Stream&, const c10::DeviceIndex, const c10::EventFlag) const override {}
  void block(void*, const c10::Stream&) const override {}
  bool queryEvent(void*) const override { return true; }
  void destroyEvent(void*, const c10::DeviceIndex) const noexcept override {}
#if GPULAB_TORCH_AT_LEAST(2, 4)
  c10::Stream getNewStream(c10::Device device, int) const override { return c10::Stream(c10::Stream::DEFAULT, device); }
  void synchronizeEvent(void*) const override {}
  double elapsedTime(void*, void*, const c10::DeviceIndex) const override { return 0.0; }
#endif
#if GPULAB_TORCH_AT_LEAST(2, 6)
  /// As CUDAGuardImpl's: SetDevice, cudaDeviceSynchronize (work: it needs the context),
  /// then MaybeSetDevice back.
  void synchronizeDevice(const c10::DeviceIndex index) const override {
    Driver& d = driver();
    const int previous = current_device();
    check(d.guard_set_device(index));
    const Error error = d.synchronize_current();
    (void)d.maybe_set_device(previous);
    check(error);
  }
#endif
};

}  // namespace
}  // namespace gpulab::sim

// ---- registration ----------------------------------------------------------------------
C10_REGISTER_GUARD_IMPL(CUDA, gpulab::sim::SimCudaGuardImpl);
