// dp-probe: DataParallel scenarios that need a process of their own (the environment is
// read once per process). Prints a lesson report (--json); one scenario per run:
//   balance IDS            constructs DataParallel over IDS (e.g. 0,1,2,3; "all": defaults)
//   article [--set-device] the article's setup: module on cuda:2, device_ids {2,3}, one
//                          training step, then two unguarded calls on the main thread:
//                          torch::cuda::synchronize() with no index, and labels moved
//                          with an index-less torch::kCUDA; --set-device calls
//                          set_device(device_ids[0]) first
#include <torch/torch.h>

#include <sstream>
#include <string>
#include <vector>

#include "gpulab/cuda.h"
#include "gpulab/data_parallel.h"
#include "gpulab/lesson.h"

namespace {

std::vector<int> parse_ids(const std::string& list) {
  std::vector<int> ids;
  if (list == "all") return ids;
  std::istringstream entries(list);
  for (std::string entry; std::getline(entries, entry, ',');) ids.push_back(std::stoi(entry));
  return ids;
}

void balance(gpulab::Lesson& lesson, const std::string& ids) {
  torch::nn::Linear model(4, 2);
  gpulab::DataParallel parallel(model, parse_ids(ids));
  lesson.fact("device_ids", static_cast<std::int64_t>(parallel.device_ids().size()));
}

void article(gpulab::Lesson& lesson, bool set_device_first) {
  const std::vector<int> device_ids{2, 3};
  if (set_device_first) gpulab::cuda::set_device(device_ids[0]);
  torch::nn::Linear model(512, 512);
  model->to(torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(device_ids[0])));
  gpulab::DataParallel parallel(model, device_ids);
  const auto output = parallel.forward(torch::randn({64, 512}));
  output.pow(2).mean().backward();
  lesson.observe("after the step", gpulab::tensors_of(*model));
  torch::cuda::synchronize();  // the step's timing: the runtime's current device
  lesson.observe("after synchronize", gpulab::tensors_of(*model));
  const auto labels = torch::zeros({64}, torch::kLong).to(torch::kCUDA);  // PyTorch's current device
  lesson.observe("after index-less labels", gpulab::tensors_of(*model));
}

}  // namespace

int main(int argc, char** argv) {
  return gpulab::run_lesson("dp-probe", argc, argv, [](gpulab::Lesson& lesson) {
    const auto& args = lesson.args();
    TORCH_CHECK(!args.empty(), "usage: dp-probe balance IDS | article [--set-device]");
    if (args[0] == "balance") {
      TORCH_CHECK(args.size() == 2, "usage: dp-probe balance IDS");
      balance(lesson, args[1]);
    } else if (args[0] == "article") {
      article(lesson, args.size() > 1 && args[1] == "--set-device");
    } else {
      TORCH_CHECK(false, "dp-probe: unknown scenario '", args[0], "'");
    }
  });
}
