// Lesson 19 — Worker processes forked by a trainer: where does their GPU work run? (beyond the article)
//
// A trainer seeds, builds its model on the GPU and then starts a pool of worker processes
// with fork(), as a data-loading or inference pool does. Each worker is meant to prepare a
// batch on a GPU of its own: worker w on the visible GPU w + 1, while the trainer keeps the
// first visible GPU. Three workers by default (--workers N).
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

    // TODO: every worker must do its GPU work in a process of its own on its own GPU: worker w
    //       on the visible GPU w + 1 (physical GPU 5 for worker 0 under CUDA_VISIBLE_DEVICES=4,5,6,7),
    //       while the trainer's model and output stay on the first visible GPU alone.
    // STRETCH: with --worker-gpus the workers get their GPUs by nvidia-smi's numbers instead
    //          (--worker-gpus 7,6: worker 0 on physical GPU 7, worker 1 on 6), whatever the
    //          trainer's CUDA_VISIBLE_DEVICES.

    torch::manual_seed(0);
    torch::nn::Linear model(kFeatures, 1);
    model->to(torch::kCUDA);
    lesson.observe("model built", gpulab::tensors_of(*model));

    for (int w = 0; w < workers; ++w) {
      pool.fork([&](gpulab::Worker& worker) {
        const auto batch = torch::rand({kRows, kFeatures}).to(torch::kCUDA);  // this worker's GPU work
        worker.fact("batch_gpu", gpulab::physical_index_of(batch));
      });
    }
    pool.join();

    const auto output = model->forward(torch::rand({64, kFeatures}).to(torch::kCUDA));
    lesson.observe("after the workers", {{"weight", model->weight}, {"output", output}});
  });
}
