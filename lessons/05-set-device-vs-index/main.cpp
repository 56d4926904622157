// Lesson 05 — set_device vs an explicit index (article claims A2.3, A2.4, A2.5, A3.3)
//
// torch.cuda.set_device(2) makes GPU 2 this thread's current device: the default for
// `.cuda()` with no index. An explicit index still wins, a scoped guard changes the
// default only inside its scope, and a new thread starts again on device 0 — where it
// would create a stray CUDA context. Make the worker thread use the main thread's GPU.
#include <thread>

#include <torch/torch.h>

#include "gpulab/cuda.h"
#include "gpulab/lesson.h"

// The GPU this program trains on: the article's torch.cuda.set_device(gpu_id).
constexpr int kTrainDevice = 2;
// The article's `.cuda(1)`: an explicit index.
constexpr int kExplicitDevice = 1;
// The device a scoped guard (Python: `with torch.cuda.device(3):`) switches to.
constexpr int kScopedDevice = 3;

torch::Tensor small_tensor() { return torch::ones({256, 256}); }

int main(int argc, char** argv) {
  return gpulab::run_lesson("05", argc, argv, [](gpulab::Lesson& lesson) {
    gpulab::cuda::set_device(kTrainDevice);
    lesson.fact("current_device_after_set_device", gpulab::cuda::current_device());
    lesson.observe("after set_device");

    const auto by_default = small_tensor().to(torch::kCUDA);                               // .cuda()
    const auto by_index = small_tensor().to(torch::Device(torch::kCUDA, kExplicitDevice));  // .cuda(1)
    lesson.observe("cuda() and cuda(1)", {{"default", by_default}, {"explicit", by_index}});

    {
      const c10::DeviceGuard guard(torch::Device(torch::kCUDA, kScopedDevice));
      lesson.fact("current_device_in_guard", gpulab::cuda::current_device());
      lesson.observe("inside the guard", {{"scoped", small_tensor().to(torch::kCUDA)}});
    }
    lesson.fact("current_device_after_guard", gpulab::cuda::current_device());
    const auto after_guard = small_tensor().to(torch::kCUDA);

    torch::Tensor from_worker;
    std::thread worker([&] {
      lesson.fact("current_device_in_new_thread", gpulab::cuda::current_device());
      // TODO: the worker must compute on the main thread's GPU (kTrainDevice), not on device 0.
      from_worker = small_tensor().to(torch::kCUDA);
    });
    worker.join();

    lesson.observe("at the end", {{"default", by_default},
                                  {"explicit", by_index},
                                  {"after_guard", after_guard},
                                  {"worker", from_worker}});
  });
}
