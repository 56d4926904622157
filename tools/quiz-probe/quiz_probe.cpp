// quiz-probe: one `gpulab quiz` scenario, run for real. The environment (GPULAB_NODE,
// CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER, LOCAL_RANK, RANK) comes from the quiz; the
// arguments say which placement to do (src/tutor/quiz.cpp's code_text shows each as C++):
//   --code default                   torch::ones({1}, torch::kCUDA)
//   --code ones          --index I   torch::ones({1}, cuda:I)
//   --code setenv_late   --index I --setenv LIST
//                                    is_available(), setenv CUDA_VISIBLE_DEVICES=LIST, then cuda:I
//   --code set_device    --index I   set_device(I), then torch::ones({1}, torch::kCUDA)
//   --code thread        --index I   set_device(I), then torch::kCUDA in a new std::thread
//   --code device_string --device S  torch::ones({1}, torch::Device(S))
//   --code local_rank | rank         torch::ones({1}, cuda:LOCAL_RANK | cuda:RANK)
//   --code no_set_device             LOCAL_RANK is set, but torch::ones({1}, torch::kCUDA)
//   --code data_parallel --device-ids A,B [--model-on-cuda0] [--batch-to-cuda]
//                                    DataParallel(model, {A, B}) on a CPU batch (or one moved
//                                    with an index-less torch::kCUDA)
//   --code default_ids               the model on torch::kCUDA, DataParallel(model): every GPU
//   --code save | load   --file F    torch::save from cuda:I / torch::load into a CPU model
//   --code fork          --index I [--after-init]
//                                    (is_available() first,) fork(), torch::ones({1}, cuda:I) in the
//                                    child: its physical GPU is the fact worker0_x_gpu, its error
//                                    recorded under "place"
//   --code guard --index I --borrow J [--scoped] [--reads-only]
//                                    set_device(I); a helper borrows cuda:J with set_device (or a
//                                    c10::DeviceGuard) and makes a tensor there (or only reads a
//                                    counter); then x on torch::kCUDA (x before the helper)
//   --code mixed_device  --index I [--batch-to-cuda] [--cpu-mask]
//                                    the model on cuda:I, its input on the model's device (or
//                                    an index-less torch::kCUDA), y = model(x) times a CPU
//                                    0-dim scalar (or a CPU mask)
// It prints the lesson report (--json): observation "placed" locates tensor "x" (the output
// "y" of DataParallel, the loaded "weight"), an error is recorded under "place", and the
// facts "device_count" and "visible" ("2,3": the physical GPU of cuda:0, cuda:1, ...) say
// what this process saw, for the quiz's explanation.
#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>

#include <torch/torch.h>

#include "gpulab/cuda.h"
#include "gpulab/data_parallel.h"
#include "gpulab/lesson.h"
#include "gpulab/observe.h"
#include "gpulab/processes.h"

namespace {

torch::Device cuda(int index) { return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index)); }

int env_int(const char* name) {
  const char* value = std::getenv(name);
  return std::stoi(value != nullptr ? value : "");
}

bool flag(const gpulab::Lesson& lesson, const std::string& name) {
  return std::find(lesson.args().begin(), lesson.args().end(), name) != lesson.args().end();
}

void place(gpulab::Lesson& lesson, const std::string& code) {
  const auto index = [&] { return lesson.int_list("--index").at(0); };
  if (code == "default" || code == "no_set_device") {
    lesson.observe("placed", {{"x", torch::ones({1}, torch::kCUDA)}});
  } else if (code == "ones") {
    lesson.observe("placed", {{"x", torch::ones({1}, cuda(index()))}});
  } else if (code == "setenv_late") {
    (void)torch::cuda::is_available();  // CUDA starts here
    setenv("CUDA_VISIBLE_DEVICES", lesson.option("--setenv").c_str(), 1);
    lesson.observe("placed", {{"x", torch::ones({1}, cuda(index()))}});
  } else if (code == "set_device" || code == "thread") {
    gpulab::cuda::set_device(index());
    torch::Tensor x;
    if (code == "thread") std::thread([&] { x = torch::ones({1}, torch::kCUDA); }).join();
    else x = torch::ones({1}, torch::kCUDA);  // no index: the current device
    lesson.observe("placed", {{"x", x}});
  } else if (code == "device_string") {
    lesson.observe("placed", {{"x", torch::ones({1}, torch::Device(lesson.option("--device")))}});
  } else if (code == "local_rank" || code == "rank") {
    lesson.observe("placed", {{"x", torch::ones({1}, cuda(env_int(code == "rank" ? "RANK" : "LOCAL_RANK")))}});
  } else if (code == "data_parallel") {
    const auto ids = lesson.int_list("--device-ids");
    torch::nn::Linear model(16, 4);
    model->to(flag(lesson, "--model-on-cuda0") ? torch::Device(torch::kCUDA) : cuda(ids.at(0)));
    gpulab::DataParallel parallel(model, ids);
    auto batch = torch::randn({8, 16});
    if (flag(lesson, "--batch-to-cuda")) batch = batch.to(torch::kCUDA);
    const auto y = parallel.forward(batch);
    // The GPUs holding this process's memory now are the replicas' (observation "gpus").
    lesson.observe("placed", {{"y", y}});
  } else if (code == "default_ids") {
    torch::nn::Linear model(16, 4);
    model->to(torch::kCUDA);
    gpulab::DataParallel parallel(model);
    lesson.observe("placed", {{"y", parallel.forward(torch::randn({8, 16}))}});
  } else if (code == "mixed_device") {
    torch::nn::Linear model(16, 4);
    model->to(cuda(index()));
    const auto x = torch::randn({8, 16}).to(flag(lesson, "--batch-to-cuda") ? torch::Device(torch::kCUDA)
                                                                           : model->weight.device());
    const auto y = model(x) * (flag(lesson, "--cpu-mask") ? torch::ones({8, 4}) : torch::tensor(2.0f));
    lesson.observe("placed", {{"y", y}});
  } else if (code == "save") {
    torch::nn::Linear model(16, 4);
    model->to(cuda(index()));
    torch::save(model, lesson.option("--file"));
  } else if (code == "load") {
    torch::nn::Linear model(16, 4);
    torch::load(model, lesson.option("--file"));
    lesson.observe("placed", {{"weight", model->weight}});
  } else if (code == "fork") {
    if (flag(lesson, "--after-init")) (void)torch::cuda::is_available();  // CUDA starts here
    gpulab::WorkerPool pool(lesson);
    const int i = index();
    pool.fork([&](gpulab::Worker& worker) { worker.fact("x_gpu", gpulab::physical_index_of(torch::ones({1}, cuda(i)))); });
    const auto reports = pool.join();
    if (!reports.at(0).finished) throw std::runtime_error(reports.at(0).error);  // the worker's error is the answer
  } else if (code == "guard") {
    gpulab::cuda::set_device(index());
    const bool reads_only = flag(lesson, "--reads-only");
    torch::Tensor x;
    if (reads_only) x = torch::ones({1}, torch::kCUDA);
    {
      const int borrowed = lesson.int_list("--borrow").at(0);
      std::optional<c10::DeviceGuard> guard;
      if (flag(lesson, "--scoped")) guard.emplace(cuda(borrowed));
      else gpulab::cuda::set_device(borrowed);
      if (reads_only) (void)gpulab::cuda::memory_reserved();
      else (void)torch::ones({1}, torch::kCUDA);
    }
    if (!reads_only) x = torch::ones({1}, torch::kCUDA);
    lesson.observe("placed", {{"x", x}});  // with reads only, its GPUs are the answer
  } else {
    throw std::invalid_argument("quiz-probe: unknown --code '" + code + "'");
  }
}

}  // namespace

int main(int argc, char** argv) {
  return gpulab::run_lesson("quiz", argc, argv, [](gpulab::Lesson& lesson) {
    const std::string code = lesson.option("--code");
    lesson.attempt("place", [&] { place(lesson, code); });
    // What this process sees, observed after the placement so it cannot change it.
    const int count = static_cast<int>(torch::cuda::device_count());
    std::string visible;
    for (int i = 0; i < count; ++i)
      visible += (i == 0 ? "" : ",") + std::to_string(gpulab::physical_index_of(cuda(i)));
    lesson.fact("device_count", static_cast<std::int64_t>(count));
    lesson.fact("visible", visible);
  });
}
