// Lesson 09 — DataParallel on GPUs 2 and 3: where does the model go? (article claims A3.1, A3.3)
//
// DataParallel(model, device_ids) copies the model from device_ids[0] to the other GPUs at
// every forward, so the model must already live on cuda:device_ids[0]. The program first
// makes the article's mistake (the model on cuda:0, device_ids {2, 3}) and records the
// error; then it trains with the given device_ids, then with device_ids omitted.
#include <optional>
#include <string>

#include <torch/torch.h>

#include "gpulab/data_parallel.h"
#include "gpulab/lesson.h"

// A batch on the CPU: DataParallel scatters it to the replicas' GPUs.
torch::Tensor make_batch() { return torch::randn({/*batch=*/64, /*features=*/1024}); }

int main(int argc, char** argv) {
  return gpulab::run_lesson("09", argc, argv, [](gpulab::Lesson& lesson) {
    torch::manual_seed(0);
    // The article's device_ids=[2, 3]; the checks try others (--device-ids 3,1).
    const std::vector<int> device_ids = lesson.int_list("--device-ids", {2, 3});

    torch::nn::Linear model(/*in_features=*/1024, /*out_features=*/1024);
    model->to(torch::kCUDA);  // the article's model.cuda(): the current device, cuda:0
    // --output-device N gathers the output on cuda:N, -1 on the CPU; absent, on device_ids[0].
    const std::string flag = lesson.option("--output-device");
    const std::optional<int> output_device = flag.empty() ? std::nullopt : std::optional<int>(std::stoi(flag));
    gpulab::DataParallel parallel(model, device_ids, output_device);
    lesson.attempt("model on cuda:0", [&] { parallel.forward(make_batch()); });

    // DataParallel copies the model from device_ids[0]: it must be there before forward.
    model->to(torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(device_ids[0])));
    lesson.observe("before forward", gpulab::tensors_of(*model));
    lesson.attempt("forward", [&] {
      const auto output = parallel.forward(make_batch());
      lesson.observe("after forward", {{"weight", model->weight}, {"output", output}});
      output.pow(2).mean().backward();
    });

    gpulab::DataParallel everywhere(model);  // device_ids omitted: every visible GPU
    // Omitted device_ids start at cuda:0, so device_ids[0] is cuda:0.
    model->to(torch::Device(torch::kCUDA, 0));
    lesson.attempt("defaults", [&] {
      const auto output = everywhere.forward(make_batch());
      lesson.fact("default_device_ids", static_cast<std::int64_t>(everywhere.device_ids().size()));
      lesson.observe("defaults: after forward", {{"weight", model->weight}, {"output", output}});
    });
  });
}
