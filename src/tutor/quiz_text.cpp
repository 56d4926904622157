// A quiz round's text (quiz_text.h).
#include "tutor/quiz_text.h"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

namespace gpulab::tutor {
namespace {

using quiz::all_alike;
using quiz::join;
using quiz::names_uuids;

// The GPU lines of an unlike node end with its speed ranking (display only: CUDA's order is the probe's).
std::string speed_text(const Node& node) {
  const auto& g = node.gpus;
  std::vector<std::size_t> fastest(g.size());
  for (std::size_t i = 0; i < g.size(); ++i) fastest[i] = i;
  std::stable_sort(fastest.begin(), fastest.end(), [&](std::size_t a, std::size_t b) {
    return std::tie(g[a].cc_major, g[a].cc_minor, g[a].sm_count) > std::tie(g[b].cc_major, g[b].cc_minor, g[b].sm_count);
  });
  std::string order;
  for (std::size_t i : fastest) order += (order.empty() ? "GPU " : ", GPU ") + std::to_string(i);
  return "  speed, fastest first: " + order;
}

}  // namespace

std::string env_text(const QuizScenario& s) {
  const auto show = [](const char* name, const std::optional<std::string>& value) {
    if (!value) return fmt::format("{} unset", name);
    return value->empty() || value->find(' ') != std::string::npos ? fmt::format("{}=\"{}\"", name, *value)
                                                                   : fmt::format("{}={}", name, *value);
  };
  std::string text = show("CUDA_VISIBLE_DEVICES", s.visible) + "  " + show("CUDA_DEVICE_ORDER", s.order);
  if (s.container) text = "in a container: NVIDIA_VISIBLE_DEVICES=" + *s.container + "  " + text;
  if (s.code == QuizCode::kLocalRank || s.code == QuizCode::kNoSetDevice) text += "  LOCAL_RANK=" + std::to_string(s.index);
  if (s.code == QuizCode::kRank) {
    const auto per_node = static_cast<int>(quiz_node(s.node).gpus.size());
    text += fmt::format("  RANK={} LOCAL_RANK={} (two nodes like this one, {} ranks each)", s.index, s.index % per_node, per_node);
  }
  return text;
}

std::vector<std::string> node_text(const Node& node, bool with_uuids) {
  const auto& g = node.gpus;
  const bool alike = all_alike(node);
  const bool mig = std::any_of(g.begin(), g.end(), [](const Gpu& x) { return x.mig_mode; });
  std::vector<std::string> lines = {fmt::format("{}, {} GPUs", node.name, g.size())};
  if (alike) lines[0] += fmt::format(": GPU 0-{}, all {}", g.size() - 1, g[0].name);
  if (alike && !with_uuids && !mig) return lines;
  for (std::size_t i = 0; i < g.size(); ++i) {
    std::string line = alike ? fmt::format("  GPU {}", i)
                             : fmt::format("  GPU {} {} (compute {}.{}, {} SMs)", i, g[i].name, g[i].cc_major, g[i].cc_minor, g[i].sm_count);
    if (with_uuids) line += " " + g[i].uuid.substr(0, 12) + "...";
    if (g[i].mig_mode) {
      line += ", MIG mode:";
      for (const auto& m : g[i].mig) line += " " + m.uuid.substr(0, 12) + "...";
    }
    lines.push_back(line);
  }
  if (!alike) lines.push_back(speed_text(node));
  return lines;
}

std::vector<std::string> code_text(const QuizScenario& s) {
  const std::string i = std::to_string(s.index);
  switch (s.code) {
    case QuizCode::kOnes: return {"auto x = torch::ones({1}, torch::Device(torch::kCUDA, " + i + "));"};
    case QuizCode::kSetDevice:
      return {"gpulab::cuda::set_device(" + i + ");  // torch.cuda.set_device(" + i + ")",
              "auto x = torch::ones({1}, torch::kCUDA);"};
    case QuizCode::kLocalRank:
      return {"const int local_rank = std::stoi(std::getenv(\"LOCAL_RANK\"));",
              "auto x = torch::ones({1}, torch::Device(torch::kCUDA, local_rank));"};
    case QuizCode::kDataParallel:
      return {"torch::nn::Linear model(16, 4);",
              s.model_on_cuda0 ? "model->to(torch::kCUDA);"
                               : "model->to(torch::Device(torch::kCUDA, " + std::to_string(s.device_ids[0]) + "));",
              "gpulab::DataParallel parallel(model, {" + join(s.device_ids, ", ") + "});  // nn.DataParallel(model, device_ids=[" +
                  join(s.device_ids, ", ") + "])",
              s.batch_to_cuda ? "auto y = parallel.forward(torch::randn({8, 16}).to(torch::kCUDA));"
                              : "auto y = parallel.forward(torch::randn({8, 16}));"};
    case QuizCode::kDefault: return {"auto x = torch::ones({1}, torch::kCUDA);"};
    case QuizCode::kSetenvLate:
      return {"std::cout << torch::cuda::is_available() << '\\n';",
              "setenv(\"CUDA_VISIBLE_DEVICES\", \"" + s.setenv + "\", 1);",
              "auto x = torch::ones({1}, torch::Device(torch::kCUDA, " + i + "));"};
    case QuizCode::kThread:
      return {"gpulab::cuda::set_device(" + i + ");", "torch::Tensor x;",
              "std::thread([&] { x = torch::ones({1}, torch::kCUDA); }).join();"};
    case QuizCode::kDeviceString: return {"auto x = torch::ones({1}, torch::Device(\"" + s.device_string + "\"));"};
    case QuizCode::kRank:
      return {"const int rank = std::stoi(std::getenv(\"RANK\"));",
              "auto x = torch::ones({1}, torch::Device(torch::kCUDA, rank));"};
    case QuizCode::kNoSetDevice:
      return {"const int local_rank = std::stoi(std::getenv(\"LOCAL_RANK\"));  // never used for the device",
              "auto x = torch::ones({1}, torch::kCUDA);"};
    case QuizCode::kDefaultIds:
      return {"torch::nn::Linear model(16, 4);", "model->to(torch::kCUDA);",
              "gpulab::DataParallel parallel(model);  // device_ids omitted", "auto y = parallel.forward(torch::randn({8, 16}));"};
    case QuizCode::kGuard: {
      const std::string j = std::to_string(s.borrowed);
      std::vector<std::string> lines = {"gpulab::cuda::set_device(" + i + ");  // this process's GPU"};
      if (s.ask_memory) lines.push_back("auto x = torch::ones({1}, torch::kCUDA);");
      lines.push_back("{  // a helper borrows cuda:" + j);
      lines.push_back(s.scoped ? "  const c10::DeviceGuard guard(torch::Device(torch::kCUDA, " + j + "));"
                               : "  gpulab::cuda::set_device(" + j + ");");
      lines.push_back(s.ask_memory ? "  auto reserved = gpulab::cuda::memory_reserved();  // reads a counter, allocates nothing"
                                   : "  auto tmp = torch::ones({1}, torch::kCUDA);");
      lines.push_back("}");
      if (!s.ask_memory) lines.push_back("auto x = torch::ones({1}, torch::kCUDA);");
      return lines;
    }
    case QuizCode::kMixedDevice:
      return {"torch::nn::Linear model(16, 4);", "model->to(torch::Device(torch::kCUDA, " + i + "));",
              s.batch_to_cuda ? "auto x = torch::randn({8, 16}).to(torch::kCUDA);"
                              : "auto x = torch::randn({8, 16}).to(model->weight.device());",
              s.cpu_mask ? "auto y = model(x) * torch::ones({8, 4});  // a mask made on the CPU"
                         : "auto y = model(x) * torch::tensor(2.0f);  // a CPU 0-dim scalar"};
    case QuizCode::kLoad:
      return {"// saved earlier on dgx-a100 (every GPU visible): model->to(torch::Device(torch::kCUDA, " + i + ")); torch::save(model, \"ckpt.pt\");",
              "torch::nn::Linear model(16, 4);  // on the CPU", "torch::load(model, \"ckpt.pt\");"};
    case QuizCode::kFork: {
      std::vector<std::string> lines;
      if (s.fork_after_init) lines.push_back("std::cout << torch::cuda::is_available() << '\\n';");
      lines.push_back("if (fork() == 0) {  // a worker process");
      lines.push_back("  auto x = torch::ones({1}, torch::Device(torch::kCUDA, " + i + "));");
      lines.push_back("}");
      return lines;
    }
  }
  return {};
}

std::string question_text(const QuizScenario& s) {
  if (s.code == QuizCode::kDataParallel && s.ask_output) return "the physical GPU that holds the output y";
  if (s.code == QuizCode::kDataParallel && s.batch_to_cuda) return "the physical GPUs that hold this process's memory after forward";
  if (s.code == QuizCode::kDataParallel) return "the physical GPUs that run a replica (that hold this process's memory after forward)";
  if (s.code == QuizCode::kDefaultIds) return "the physical GPU that holds the output y";
  if (s.code == QuizCode::kLoad) return "the physical GPU that holds the loaded model's weight";
  if (s.container) return "the host's GPU (the host nvidia-smi's number) that holds x";
  if (s.code == QuizCode::kFork) return "the physical GPU that holds the worker's x";
  if (s.code == QuizCode::kGuard && s.ask_memory) return "the physical GPUs where this process holds memory (a CUDA context counts) after the helper";
  if (s.code == QuizCode::kMixedDevice) return "the physical GPU that holds y (or does an op fail?)";
  return "the physical GPU that holds x";
}

std::string round_text(int round, int rounds, const QuizScenario& s, const Node& node) {
  const auto node_lines = node_text(node, names_uuids(s));
  std::string text = fmt::format("\nRound {} of {}\n  node: {}\n", round, rounds, node_lines[0]);
  for (std::size_t i = 1; i < node_lines.size(); ++i) text += "      " + node_lines[i] + '\n';
  text += "  env:  " + env_text(s) + "\n  code:\n";
  for (const auto& line : code_text(s)) text += "      " + line + '\n';
  return text + "  question: " + question_text(s) + '\n';
}

}  // namespace gpulab::tutor
