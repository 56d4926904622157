// Lesson 09 — DataParallel on GPUs 2 and 3: where does the model go? (article claims A3.1, A3.3)
//
// DataParallel(model, device_ids) runs a replica of the model on each GPU of device_ids at
// every forward. The program first tries the article's arrangement (the model on cuda:0,
// device_ids {2, 3}) and records what happens; then it trains with the given device_ids,
// then with device_ids omitted.
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
    // STRETCH: run with --output-device N (a CUDA index, or -1 for the CPU): the second forward's
    //          output must then be gathered there, the model still where your fix put it.
    gpulab::DataParallel parallel(model, device_ids);
    lesson.attempt("model on cuda:0", [&] { parallel.forward(make_batch()); });

    // TODO: make the replicas of this forward run on the GPUs device_ids names (physical
    //       GPUs 2 and 3 here), with nothing else changed.
    lesson.observe("before forward", gpulab::tensors_of(*model));
    lesson.attempt("forward", [&] {
      const auto output = parallel.forward(make_batch());
      lesson.observe("after forward", {{"weight", model->weight}, {"output", output}});
      output.pow(2).mean().backward();
    });

    gpulab::DataParallel everywhere(model);  // device_ids omitted: DataParallel's default
    // TODO: with device_ids omitted, this forward must still work after your first fix, on
    //       the same GPUs as shipped.
    lesson.attempt("defaults", [&] {
      const auto output = everywhere.forward(make_batch());
      lesson.fact("default_device_ids", static_cast<std::int64_t>(everywhere.device_ids().size()));
      lesson.observe("defaults: after forward", {{"weight", model->weight}, {"output", output}});
    });
  });
}
