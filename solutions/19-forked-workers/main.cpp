// Lesson 19 — Worker processes forked by a trainer: where does their GPU work run? (beyond the article)
//
// A trainer seeds, builds its model on the GPU and then starts a pool of worker processes
// with fork(), as a data-loading or inference pool does. Each worker is meant to prepare a
// batch on a GPU of its own: worker w on the visible GPU w + 1, while the trainer keeps the
// first visible GPU. Three workers by default (--workers N).
#include <cstdlib>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "gpulab/cuda.h"
#include "gpulab/lesson.h"
#include "gpulab/observe.h"
#include "gpulab/processes.h"

constexpr int kFeatures = 256;
constexpr int kRows = 4096;  // one worker's batch: 4 MiB

int main(int argc, char** argv) {
  return gpulab::run_lesson("19", argc, argv, [](gpulab::Lesson& lesson) {
    const int workers = lesson.int_list("--workers", {3}).at(0);
    gpulab::WorkerPool pool(lesson);

    // Fork the workers before anything in this process starts CUDA: a child forked after
    // that inherits a CUDA it cannot use (torch::manual_seed starts it too, to seed every
    // GPU). Each worker then starts CUDA afresh in its own process, on its own GPU.
    const std::vector<int> worker_gpus = lesson.int_list("--worker-gpus");
    for (int w = 0; w < workers; ++w) {
      pool.fork([&](gpulab::Worker& worker) {
        if (!worker_gpus.empty()) {
          // STRETCH: CUDA reads these once, when it starts in this worker: one GPU, named as
          //          nvidia-smi numbers it (PCI bus order).
          setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
          setenv("CUDA_VISIBLE_DEVICES", std::to_string(worker_gpus.at(static_cast<std::size_t>(worker.number()))).c_str(), 1);
        } else {
          gpulab::cuda::set_device(worker.number() + 1);  // the visible GPU w + 1
        }
        const auto batch = torch::rand({kRows, kFeatures}).to(torch::kCUDA);  // this worker's GPU work
        worker.fact("batch_gpu", gpulab::physical_index_of(batch));
      });
    }

    torch::manual_seed(0);
    torch::nn::Linear model(kFeatures, 1);
    model->to(torch::kCUDA);
    lesson.observe("model built", gpulab::tensors_of(*model));

    pool.join();

    const auto output = model->forward(torch::rand({64, kFeatures}).to(torch::kCUDA));
    lesson.observe("after the workers", {{"weight", model->weight}, {"output", output}});
  });
}
