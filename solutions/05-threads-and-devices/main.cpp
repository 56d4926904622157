// Lesson 05 — Which GPU does a new thread use? (article claims A2.3, A2.4, A2.5, A3.3)
//
// The main thread calls set_device (the article's torch.cuda.set_device) and its `.cuda()`
// lands there, while `.cuda(i)` with an explicit index lands on cuda:i whatever the current
// device. Then the trainer starts one worker thread per GPU: each trains its own copy of a
// model with code written for "the current GPU", as most training code is.
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <torch/torch.h>

#include "gpulab/cuda.h"
#include "gpulab/lesson.h"
#include "gpulab/threads.h"

constexpr std::int64_t kFeatures = 1024;
constexpr std::int64_t kBatch = 256;

// One step of the trainer, written for "the current GPU" (`.cuda()` with no index).
torch::Tensor train_step(std::size_t worker, gpulab::MidStep& mid_step) {
  const torch::NoGradGuard no_grad;
  torch::nn::Linear model(kFeatures, kFeatures);
  model->to(torch::kCUDA);
  const auto batch = torch::randn({kBatch, kFeatures}).to(torch::kCUDA);
  const auto loss = model->forward(batch).pow(2).mean();
  mid_step.arrive(worker, model->weight);
  return loss.cpu();
}

// STRETCH: the UUID (as `nvidia-smi -L` prints it) of the GPU the calling thread computes on,
// so that a worker's log line can be matched to nvidia-smi's list.
std::string this_threads_gpu() {
  return gpulab::cuda::get_device_properties(gpulab::cuda::current_device()).uuid;
}

int main(int argc, char** argv) {
  return gpulab::run_lesson("05", argc, argv, [](gpulab::Lesson& lesson) {
    // --devices 2,3,5: worker w trains on cuda:devices[w]. Default: one worker per visible GPU.
    std::vector<int> devices = lesson.int_list("--devices");
    if (devices.empty())
      for (int i = 0; i < static_cast<int>(torch::cuda::device_count()); ++i) devices.push_back(i);
    if (devices.empty()) throw std::runtime_error("this process sees no GPU");

    // The main thread: set_device changes the default, an explicit index wins over it.
    gpulab::cuda::set_device(devices.front());
    lesson.fact("main_thread_current_device", gpulab::cuda::current_device());
    const auto by_default = torch::ones({kFeatures}).to(torch::kCUDA);  // .cuda()
    const torch::Device last(torch::kCUDA, static_cast<c10::DeviceIndex>(devices.back()));
    const auto by_index = torch::ones({kFeatures}).to(last);  // .cuda(i)
    lesson.observe("main thread", {{"default", by_default}, {"explicit", by_index}});

    const std::size_t workers = devices.size();
    std::vector<int> started_on(workers, -1), current_after(workers, -1);
    std::vector<std::string> gpu_of_worker(workers);
    gpulab::MidStep mid_step(workers);  // holds the workers mid-step while the main thread looks
    std::vector<std::thread> threads;
    for (std::size_t w = 0; w < workers; ++w)
      threads.emplace_back([&, w] {
        started_on[w] = gpulab::cuda::current_device();
        // The current device belongs to the thread, and a new thread starts on 0.
        gpulab::cuda::set_device(devices[w]);
        train_step(w, mid_step);
        current_after[w] = gpulab::cuda::current_device();  // the thread's device after its step
        gpu_of_worker[w] = this_threads_gpu();
        mid_step.done(w);
      });
    mid_step.look([&](const std::vector<gpulab::NamedTensor>& weights) {
      lesson.observe("every worker mid-step", weights);
    });
    for (auto& thread : threads) thread.join();

    for (std::size_t w = 0; w < workers; ++w) {
      lesson.fact("worker_" + std::to_string(w) + "_started_on", started_on[w]);
      lesson.fact("worker_" + std::to_string(w) + "_current_device", current_after[w]);
      lesson.fact("worker_" + std::to_string(w) + "_gpu", gpu_of_worker[w]);
    }
    lesson.observe("after training");
  });
}
