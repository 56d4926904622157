// Python's parallel_apply (torch/nn/parallel/parallel_apply.py): one thread per replica,
// each inside `torch.cuda.device(d)` with the caller's grad mode; an exception in a replica
// is re-raised on the caller as "Caught <type> in replica i on device d.".
#include <exception>
#include <thread>
#include <typeinfo>

#include <ATen/ThreadLocalState.h>
#include <c10/core/DeviceGuard.h>
#include <c10/util/Type.h>

#include "gpulab/data_parallel.h"

namespace gpulab {
namespace {

// The exception's C++ type and its message (without LibTorch's backtrace).
std::pair<std::string, std::string> describe(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const c10::Error& e) {
    return {c10::demangle(typeid(e).name()), e.what_without_backtrace()};
  } catch (const std::exception& e) {
    return {c10::demangle(typeid(e).name()), e.what()};
  } catch (...) {
    return {"an unknown exception", ""};
  }
}

std::string replica_message(std::size_t replica, int device, const std::exception_ptr& original) {
  const auto [type, message] = describe(original);
  return "Caught " + type + " in replica " + std::to_string(replica) + " on device " + std::to_string(device) +
         ".\nOriginal " + type + ": " + message;
}

}  // namespace

ReplicaError::ReplicaError(std::size_t replica, int device, std::exception_ptr original)
    : c10::Error(c10::SourceLocation{__func__, __FILE__, static_cast<std::uint32_t>(__LINE__)},
                 replica_message(replica, device, original)),
      replica_(replica),
      device_(device),
      original_(std::move(original)) {}

namespace parallel {

void run_on_devices(const std::vector<std::function<void()>>& jobs, const std::vector<int>& devices) {
  TORCH_CHECK(jobs.size() == devices.size(), "run_on_devices: ", jobs.size(), " jobs for ", devices.size(), " devices");
  std::vector<std::exception_ptr> errors(jobs.size());
  // Grad mode and the other thread-local state a new thread would not inherit.
  const at::ThreadLocalState caller_state;
  const auto run = [&](std::size_t i) {
    try {
      const at::ThreadLocalStateGuard state(caller_state);
      const c10::DeviceGuard guard(c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(devices[i])));
      jobs[i]();
    } catch (...) {
      errors[i] = std::current_exception();
    }
  };
  if (jobs.size() == 1) {
    run(0);
  } else {
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < jobs.size(); ++i) threads.emplace_back(run, i);
    for (std::thread& thread : threads) thread.join();
  }
  for (std::size_t i = 0; i < errors.size(); ++i)
    if (errors[i]) throw ReplicaError(i, devices[i], errors[i]);
}

}  // namespace parallel
}  // namespace gpulab
