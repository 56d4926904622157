// Why a quiz round came out so (quiz_why.h).
#include "tutor/quiz_why.h"

#include <algorithm>

#include <fmt/format.h>

#include "model/container.h"
#include "model/visibility.h"

namespace gpulab::tutor {
namespace {

using quiz::all_alike;
using quiz::cuda;
using quiz::join;
using quiz::names_uuids;

// In a container: which host GPUs it has, and how it numbers them (model/container.h).
std::string container_why(const QuizScenario& s, const Node& host) {
  const ContainerView view = container_view(host, s.container);
  std::string gpus;
  for (const int g : view.host_gpus) gpus += (gpus.empty() ? "" : ", ") + std::to_string(g);
  return "NVIDIA_VISIBLE_DEVICES=" + *s.container + ": the container has the host's GPUs " + gpus +
         ", numbered 0.. in PCI order whatever the list's order; CUDA_VISIBLE_DEVICES counts in those numbers. ";
}

// The why's first half: how CUDA read CUDA_VISIBLE_DEVICES (explain_visibility()'s wording).
std::string visibility_why(const QuizScenario& s, const Node& host) {
  if (s.container) {
    const Node node = container_node(host, container_view(host, s.container));
    QuizScenario inside = s;
    inside.container.reset();
    std::string why = visibility_why(inside, node);
    if (const auto at = why.find("every GPU is visible"); at != std::string::npos)
      why.replace(at, 20, "every GPU of the container is visible");
    return container_why(s, host) + why;
  }
  const Node& node = host;
  const DeviceOrder order = parse_device_order(s.order ? s.order->c_str() : nullptr);
  std::string why = s.visible ? "CUDA_VISIBLE_DEVICES=" + (s.visible->empty() ? std::string("\"\"") : *s.visible) + ": "
                              : "CUDA_VISIBLE_DEVICES is unset: ";
  if (const auto note = explain_visibility(node, s.visible, order))
    why = note->rfind("CUDA_VISIBLE_DEVICES", 0) == 0 ? *note : why + *note;
  else if (!s.visible) why += "every GPU is visible";
  else if (s.visible->rfind("GPU-", 0) == 0) why += "each UUID prefix names one GPU, in the order listed";
  else if (s.visible->rfind("MIG-", 0) == 0) why += "a MIG- UUID names one MIG instance, which lives on its physical GPU";
  else why += "the GPUs listed, in that order";
  // On unlike GPUs CUDA_DEVICE_ORDER decides what an index counts in.
  if (!all_alike(node) && !names_uuids(s) && !(s.visible && s.visible->empty()))
    why += order == DeviceOrder::PciBusId ? " (indices count in PCI_BUS_ID order, nvidia-smi's numbering)"
                                          : " (indices count in FASTEST_FIRST order, CUDA's default; NVIDIA documents only "
                                            "\"fastest first\", and the order here is gpulab's model of what is observed: "
                                            "higher compute capability, then more SMs, ties in PCI order)";
  return why;
}

// "cuda:0 = GPU 2, cuda:1 = GPU 3", or "cuda:N = GPU N for all 8".
std::string sees_text(const QuizTruth& t) {
  std::string sees = t.visible.empty() ? "no GPU" : "";
  bool identity = !t.visible.empty();
  for (std::size_t i = 0; i < t.visible.size(); ++i) {
    sees += fmt::format("{}cuda:{} = GPU {}", i == 0 ? "" : ", ", i, t.visible[i]);
    identity = identity && t.visible[i] == static_cast<int>(i);
  }
  if (identity && t.visible.size() > 2) sees = fmt::format("cuda:N = GPU N for all {}", t.visible.size());
  return sees;
}

std::string data_parallel_why(const QuizScenario& s, const QuizTruth& t) {
  const int count = static_cast<int>(t.visible.size());
  const int missing = *std::max_element(s.device_ids.begin(), s.device_ids.end());
  if (!t.error && s.ask_output)
    return "the output is gathered on device_ids[0], " + cuda(s.device_ids[0]) + ": GPU " + join(t.gpus, ", ");
  if (!t.error && s.batch_to_cuda)
    return "the replicas run on device_ids, and the batch moved with torch::kCUDA went to the current device, cuda:0, "
           "first: GPU " + join(t.gpus, ", ") + " in all";
  if (!t.error)
    return "a replica runs on each GPU of device_ids (GPU " + join(t.gpus, ", ") + ") and the output is gathered on " +
           cuda(s.device_ids[0]);
  if (!s.model_on_cuda0 && s.device_ids[0] >= count) return "model->to(" + cuda(s.device_ids[0]) + ") fails: there is no such device";
  if (missing >= count) return "device_ids names " + cuda(missing) + ", which this process does not have";
  if (s.model_on_cuda0) return "the model is on cuda:0, but DataParallel needs it on device_ids[0], " + cuda(s.device_ids[0]);
  return "DataParallel raises the error shown";
}

std::string guard_why(const QuizScenario& s, const QuizTruth& t) {
  const int count = static_cast<int>(t.visible.size());
  if (t.error) return cuda(std::max(s.index, s.borrowed) >= count ? std::max(s.index, s.borrowed) : s.index) + " does not exist here";
  const std::string helper = s.scoped ? "the guard selected " + cuda(s.borrowed) + " for the helper's block only and restored " +
                                            cuda(s.index) + " when it ended"
                                      : "set_device(" + std::to_string(s.borrowed) + ") is not scoped: the thread stays on " +
                                            cuda(s.borrowed) + " after the helper";
  if (!s.ask_memory) return helper + "; torch::kCUDA is the current device: GPU " + join(t.gpus, ", ");
  return helper + "; selecting a GPU is a cudaSetDevice, which creates its context on CUDA 12 and later builds, not on "
                  "CUDA 11: this process holds memory on GPU " + (t.gpus.empty() ? std::string("none") : join(t.gpus, ", "));
}

// The why's second half: what the code did with the devices this process sees.
std::string code_why(const QuizScenario& s, const QuizTruth& t) {
  const std::string p = join(t.gpus, ", ");
  const bool exists = s.index < static_cast<int>(t.visible.size());
  const std::string gpu = t.error ? "" : ": GPU " + p;
  switch (s.code) {
    case QuizCode::kDefault: return t.error ? "torch::kCUDA fails: this process sees no GPU" : "torch::kCUDA with no index is the current device, cuda:0" + gpu;
    case QuizCode::kSetenvLate:
      return "is_available() started CUDA, which read CUDA_VISIBLE_DEVICES then; the setenv after it changes nothing, so " +
             cuda(s.index) + (t.error ? " does not exist" : gpu);
    case QuizCode::kThread:
      return "set_device is per thread, and a new std::thread starts on cuda:0; torch::kCUDA there is cuda:0" +
             (t.error ? std::string(", which fails") : gpu);
    case QuizCode::kDeviceString:
      return t.error ? "\"" + s.device_string + "\" is refused: a device string is cuda or cuda:N, one plain index"
                     : "\"" + s.device_string + "\" is " + (s.device_string == "cuda" ? "the current device, cuda:0" : "that one index") + gpu;
    case QuizCode::kRank:
      return "RANK counts across both nodes, but each node has only its own cuda:0 to cuda:" +
             std::to_string(std::max<int>(0, static_cast<int>(t.visible.size()) - 1)) + "; " + cuda(s.index) +
             (t.error ? " does not exist here" : gpu);
    case QuizCode::kNoSetDevice:
      return "LOCAL_RANK is never used: with no set_device the current device is cuda:0" + (t.error ? std::string(", which fails") : gpu);
    case QuizCode::kDefaultIds:
      return t.error ? "DataParallel fails: " + t.message
                     : "device_ids omitted means every visible GPU, and the output is gathered on the first, cuda:0" + gpu;
    case QuizCode::kLoad:
      return "torch::load puts each tensor back on the device it was saved from, " + cuda(s.index) +
             (t.error ? ", which this node does not have" : gpu);
    case QuizCode::kFork:
      if (s.fork_after_init)
        return "is_available() started CUDA in the parent before fork(): CUDA cannot be used in such a child, whose first "
               "CUDA call fails (\"initialization error\")";
      return "CUDA had not started when the parent forked: the child starts its own, with the inherited "
             "CUDA_VISIBLE_DEVICES, and " + cuda(s.index) + (t.error ? (exists ? " fails" : " does not exist") : " is GPU " + p);
    case QuizCode::kMixedDevice:
      if (t.error && t.message.rfind("Expected all tensors", 0) != 0) return cuda(s.index) + " fails: " + t.message;
      return t.error ? "a CUDA op moves no tensor, it checks that all are on one device: " + t.message
                     : std::string("every tensor of each op is on the model's device (a CPU 0-dim scalar may join an "
                                   "element-wise op)") + gpu;
    case QuizCode::kOnes: return t.error ? cuda(s.index) + (exists ? " fails" : " does not exist") : cuda(s.index) + " is GPU " + p;
    case QuizCode::kSetDevice:
      return t.error ? "set_device(" + std::to_string(s.index) + ") fails: there is no " + cuda(s.index)
                     : "torch::kCUDA without an index is the current device, " + cuda(s.index) + " after set_device: GPU " + p;
    case QuizCode::kLocalRank:
      return "LOCAL_RANK=" + std::to_string(s.index) + " picks " + cuda(s.index) +
             (t.error ? ", which " + std::string(exists ? "fails" : "does not exist") : ": GPU " + p);
    case QuizCode::kDataParallel: return data_parallel_why(s, t);
    case QuizCode::kGuard: return guard_why(s, t);
  }
  return {};
}

}  // namespace

std::string truth_text(const QuizTruth& truth) {
  if (truth.error) return "error";
  return truth.gpus.empty() ? "none" : join(truth.gpus);
}

std::string why_text(const QuizScenario& s, const Node& node, const QuizTruth& t) {
  return visibility_why(s, node) + "; this process sees " + sees_text(t) + "; " + code_why(s, t);
}

bool rests_on_fastest_first(const QuizScenario& s, const Node& node) {
  if (all_alike(node) || names_uuids(s) || (s.visible && s.visible->empty())) return false;
  return parse_device_order(s.order ? s.order->c_str() : nullptr) == DeviceOrder::FastestFirst;
}

}  // namespace gpulab::tutor
