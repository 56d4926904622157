// quiz-probe: one `gpulab quiz` scenario, run for real. The environment (GPULAB_NODE,
// CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER, LOCAL_RANK) comes from the quiz; the arguments
// say which placement to do:
//   --code ones          --index I   torch::ones({1}, torch::Device(torch::kCUDA, I))
//   --code set_device    --index I   set_device(I), then torch::ones({1}, torch::kCUDA)
//   --code local_rank                torch::ones({1}, cuda:LOCAL_RANK)
//   --code data_parallel --device-ids A,B [--model-on-cuda0]
//                                    DataParallel(model, {A, B}) on a CPU batch
// It prints the lesson report (--json): observation "placed" locates tensor "x" (or the
// GPUs DataParallel used), an error is recorded under "place", and the facts
// "device_count" and "visible" ("2,3": the physical GPU of cuda:0, cuda:1, ...) say what
// this process saw, for the quiz's explanation.
#include <algorithm>
#include <cstdlib>
#include <string>

#include <torch/torch.h>

#include "gpulab/cuda.h"
#include "gpulab/data_parallel.h"
#include "gpulab/lesson.h"
#include "gpulab/observe.h"

namespace {

torch::Device cuda(int index) { return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index)); }

void place(gpulab::Lesson& lesson, const std::string& code) {
  if (code == "ones") {
    const auto x = torch::ones({1}, cuda(lesson.int_list("--index").at(0)));
    lesson.observe("placed", {{"x", x}});
  } else if (code == "set_device") {
    gpulab::cuda::set_device(lesson.int_list("--index").at(0));
    const auto x = torch::ones({1}, torch::kCUDA);  // no index: the current device
    lesson.observe("placed", {{"x", x}});
  } else if (code == "local_rank") {
    const char* rank = std::getenv("LOCAL_RANK");
    const auto x = torch::ones({1}, cuda(std::stoi(rank != nullptr ? rank : "")));
    lesson.observe("placed", {{"x", x}});
  } else if (code == "data_parallel") {
    const auto ids = lesson.int_list("--device-ids");
    torch::nn::Linear model(16, 4);
    const bool on_cuda0 =
        std::find(lesson.args().begin(), lesson.args().end(), "--model-on-cuda0") != lesson.args().end();
    model->to(on_cuda0 ? torch::Device(torch::kCUDA) : cuda(ids.at(0)));
    gpulab::DataParallel parallel(model, ids);
    const auto y = parallel.forward(torch::randn({8, 16}));
    // The GPUs holding this process's memory now are the replicas' (observation "gpus").
    lesson.observe("placed", {{"y", y}});
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
