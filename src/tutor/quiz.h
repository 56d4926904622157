// gpulab quiz: random placement scenarios (a node, CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER,
// a line of LibTorch); the learner names the physical GPU(s) or "error". The truth comes
// from running the scenario on the simulated node (bin/quiz-probe), never from a second
// copy of CUDA's rules here. The terminal loop is cli/quiz.cpp (docs/quiz.md).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/node.h"
#include "report/outcome.h"
#include "report/report_reader.h"

namespace gpulab::tutor {

/// The lines of LibTorch a scenario runs (tools/quiz-probe/probe.cpp runs them).
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

/// Portable draws: the standard distributions differ between standard libraries, and a
/// seed must replay the same quiz everywhere.
class Draw {
 public:
  explicit Draw(std::uint32_t seed) : rng_(seed) {}
  int below(int n);
  /// `count` distinct values in [0, n), in drawn order.
  std::vector<int> distinct(int n, int count);

 private:
  std::mt19937 rng_;
};

/// The node file `name` (a built-in node or a path).
Node quiz_node(const std::string& name);

/// A quiz's scenarios, drawn from a seed. Each round asks about one lesson's idea: the ideas
/// come in a shuffled order, every idea once before any comes again, and no two rounds of a
/// quiz are near-duplicates (the same idea with the same kind of CUDA_VISIBLE_DEVICES).
class QuizPlan {
 public:
  explicit QuizPlan(std::uint32_t seed) : draw_(seed) {}
  QuizScenario next();

 private:
  Draw draw_;
  std::vector<int> order_;  ///< topics still to come in this pass
  std::vector<std::string> seen_;
};

/// How many ideas the quiz draws from (one per lesson, two for lesson 05).
int quiz_topic_count();

// ---- a round's text ------------------------------------------------------------------------

/// "ones", "set_device", "local_rank", "data_parallel", ...: the probe's --code.
const char* code_name(QuizCode code);
std::string env_text(const QuizScenario& s);
/// The node: its first line, then one per GPU where they differ (or UUIDs matter).
std::vector<std::string> node_text(const Node& node, bool with_uuids);
std::vector<std::string> code_text(const QuizScenario& s);
std::string question_text(const QuizScenario& s);
/// The round as shown before the answer: node, env, code and question.
std::string round_text(int round, int rounds, const QuizScenario& s, const Node& node);

// ---- the truth -----------------------------------------------------------------------------

/// The probe failed (no report, or an error that is not the scenario's answer).
class ProbeFailed : public std::runtime_error {
 public:
  ProbeFailed(Outcome outcome, const std::string& message) : std::runtime_error(message), outcome_(outcome) {}
  Outcome outcome() const { return outcome_; }

 private:
  Outcome outcome_;
};

/// Runs the scenario with `probe` (twice for kLoad: save, then load). Throws ProbeFailed.
QuizTruth run_scenario(const QuizScenario& s, const std::string& probe);
/// The truth in the probe's report. Throws ProbeFailed when the probe itself failed.
QuizTruth truth_of(const QuizScenario& s, const Report& report);
/// "error", "none", or "2,3".
std::string truth_text(const QuizTruth& truth);
/// One line of why, in the terms of what the probe observed.
std::string why_text(const QuizScenario& s, const Node& node, const QuizTruth& truth);
/// The answer rests on the order of unlike GPUs under FASTEST_FIRST (CUDA's default). NVIDIA
/// documents only "fastest device first"; the order the node gives is gpulab's model of an
/// observed heuristic, not a CUDA fact, so such a round is shown but not scored.
bool rests_on_fastest_first(const QuizScenario& s, const Node& node);

// ---- answers -------------------------------------------------------------------------------

struct QuizAnswer {
  enum Kind { kGpus, kError, kUnparsable } kind = kUnparsable;
  std::vector<int> gpus;  ///< sorted, unique; empty: "none" (the CPU)
};

/// What to type, for "expected ...".
inline constexpr const char* kExpectedAnswer = "a GPU number such as 3, a list such as 2,3, or 'error'";

/// "3", " GPU 3 ", "2, 3", "gpus 2 3", "error", "ERR", "none". GPU lists are read by the
/// predictions' parser (course/predictions.h canonical_answer).
QuizAnswer parse_answer(const std::string& line);
bool correct(const QuizAnswer& answer, const QuizTruth& truth);

/// One round as --json lists it.
nlohmann::json round_json(int round, const QuizScenario& s, const std::string& answer, const QuizTruth& truth,
                          bool right, bool scored, const std::string& why);

// ---- scoring (quiz_score.cpp) --------------------------------------------------------------

/// Colours a text for the terminal (an ANSI code such as "32"), or leaves it as it is.
using Paint = std::function<std::string(const char* code, const std::string& text)>;

/// One round after the learner's answer: its lines ("  result: …", "  truth: …", the error,
/// "  why: …") and its JSON (round_json).
struct RoundResult {
  std::string text;
  nlohmann::json json;
};
RoundResult score_round(int round, const QuizScenario& s, const Node& node, const QuizTruth& truth, const QuizAnswer& given,
                        const std::string& line, const Paint& paint);

/// The quiz's end: the score over the scored rounds, by lesson what to revisit, the rounds
/// not scored; and the --json document.
struct QuizSummary {
  std::string text;
  nlohmann::json json;
};
QuizSummary quiz_summary(std::uint32_t seed, const nlohmann::json& rounds, bool ended_early);

}  // namespace gpulab::tutor
