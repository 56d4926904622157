// A quiz round's data (docs/quiz.md): the scenario drawn (a node, CUDA_VISIBLE_DEVICES,
// CUDA_DEVICE_ORDER, a line of LibTorch), what running it showed, and the small rules every
// part of the quiz shares (the node files, lists of GPUs, whether a list names UUIDs). Split
// from quiz.cpp so that the drawing, the round's text, the probe and the scoring each take
// these types without taking each other.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/node.h"

namespace gpulab::tutor {

/// The lines of LibTorch a scenario runs (tools/quiz-probe/quiz_probe.cpp runs them).
enum class QuizCode {
  kOnes,          ///< torch::ones on cuda:index
  kSetDevice,     ///< set_device(index), then torch::kCUDA
  kLocalRank,     ///< cuda:LOCAL_RANK
  kDataParallel,  ///< DataParallel(model, device_ids)
  kDefault,       ///< torch::kCUDA, no index, nothing else
  kSetenvLate,    ///< is_available(), then setenv CUDA_VISIBLE_DEVICES=setenv, then cuda:index
  kThread,        ///< set_device(index), then torch::kCUDA in a new std::thread
  kDeviceString,  ///< torch::Device(device_string)
  kRank,          ///< cuda:RANK on a node of a two-node job
  kNoSetDevice,   ///< LOCAL_RANK set, but torch::kCUDA with no set_device
  kDefaultIds,    ///< the model on torch::kCUDA, DataParallel with device_ids omitted
  kLoad,          ///< torch::load of a checkpoint saved from cuda:index of dgx-a100
  kFork,          ///< fork() (after is_available() when fork_after_init), then cuda:index in the child
  kGuard,         ///< set_device(index), a helper borrows cuda:borrowed (set_device or a guard), then torch::kCUDA
  kMixedDevice,   ///< the model on cuda:index, its input and a mask made elsewhere (lesson 18)
};

struct QuizScenario {
  std::string lesson;  ///< "05": the lesson whose idea the round asks about
  std::string topic;   ///< that idea, for the per-topic scores
  std::string node;
  std::optional<std::string> visible;  ///< CUDA_VISIBLE_DEVICES, nullopt: unset
  std::optional<std::string> order;    ///< CUDA_DEVICE_ORDER, nullopt: unset
  /// NVIDIA_VISIBLE_DEVICES: the process runs in a container given these host GPUs; nullopt: no container.
  std::optional<std::string> container;
  QuizCode code = QuizCode::kOnes;
  int index = 0;                ///< the CUDA index, LOCAL_RANK or RANK, or the saving cuda:index (kLoad)
  std::vector<int> device_ids;  ///< kDataParallel
  bool model_on_cuda0 = false;  ///< kDataParallel: model->to(torch::kCUDA), the article's mistake
  bool batch_to_cuda = false;   ///< kDataParallel, kMixedDevice: the batch moved with an index-less torch::kCUDA
  bool ask_output = false;      ///< kDataParallel: asks where the output is, not the replicas
  bool cpu_mask = false;        ///< kMixedDevice: the output times a CPU mask, not a CPU 0-dim scalar
  std::string setenv;           ///< kSetenvLate: the value set in code
  bool fork_after_init = false; ///< kFork: the parent starts CUDA (is_available()) before it forks
  std::string device_string;    ///< kDeviceString
  int borrowed = 0;             ///< kGuard: the CUDA index the helper borrows
  bool scoped = false;          ///< kGuard: the helper uses a c10::DeviceGuard, not set_device
  bool ask_memory = false;      ///< kGuard: the helper allocates nothing; asks where the process holds memory
  std::string kind;             ///< how CUDA_VISIBLE_DEVICES was drawn ("unset", "list", "empty", ...)
};

/// What running the scenario showed.
struct QuizTruth {
  bool error = false;
  std::string message;
  std::vector<int> gpus;     ///< sorted physical GPUs (empty and no error: it stayed on the CPU)
  std::vector<int> visible;  ///< physical GPU of cuda:0, cuda:1, ... in that process
};

/// The node file `name` (a built-in node or a path).
Node quiz_node(const std::string& name);
/// "ones", "set_device", "local_rank", "data_parallel", ...: the probe's --code.
const char* code_name(QuizCode code);

namespace quiz {

/// "2,3" (or with another separator).
std::string join(const std::vector<int>& values, const std::string& separator = ",");
/// "2,3" -> {2, 3}.
std::vector<int> int_list(const std::string& text);
/// "cuda:1".
std::string cuda(int index);
/// Every GPU of the node is of one kind.
bool all_alike(const Node& node);
/// CUDA_VISIBLE_DEVICES names GPU- or MIG- UUIDs.
bool names_uuids(const QuizScenario& s);

}  // namespace quiz
}  // namespace gpulab::tutor
