// What the DataParallel tests share: the in-process environment (default node, every GPU
// visible, a node state of their own) and a small module that records where and on which
// thread each replica ran.
#pragma once

#include <mutex>
#include <thread>
#include <vector>

#include <torch/torch.h>

#include "cuda_device.h"  // cuda(i)
#include "gpulab/cuda.h"

namespace gpulab::test {

/// What one forward call saw.
struct ForwardCall {
  torch::Device input_device = torch::kCPU;
  int current_device = -1;
  std::thread::id thread;
  std::int64_t rows = 0;
  bool grad_enabled = true;
};

/// Shared by a module and its clones (the copy constructor copies the pointer).
struct CallLog {
  std::mutex mutex;
  std::vector<ForwardCall> calls;
};

/// Linear(8, 4) that logs each forward and can be told to fail on one device.
struct RecorderImpl : torch::nn::Cloneable<RecorderImpl> {
  explicit RecorderImpl(int refuse_device = -1) : fail_on_device(refuse_device) { reset(); }
  void reset() override { linear = register_module("linear", torch::nn::Linear(8, 4)); }
  torch::Tensor forward(const torch::Tensor& input) {
    {
      const std::lock_guard<std::mutex> lock(log->mutex);
      log->calls.push_back({input.device(), gpulab::cuda::current_device(), std::this_thread::get_id(), input.size(0),
                            torch::GradMode::is_enabled()});
    }
    TORCH_CHECK_VALUE(input.device().index() != fail_on_device, "this replica refuses device ", fail_on_device);
    return linear(input);
  }

  std::shared_ptr<CallLog> log = std::make_shared<CallLog>();
  int fail_on_device = -1;
  torch::nn::Linear linear{nullptr};
};
TORCH_MODULE(Recorder);

}  // namespace gpulab::test
