#include "gpulab/lesson.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <cstdlib>
#include <iostream>
#include <typeinfo>

#include <c10/util/Exception.h>
#include <c10/util/Type.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <torch/nn/module.h>
#include <unistd.h>

#include "gpulab/distributed.h"
#include "gpulab/observe.h"
#include "gpulab/warnings.h"
#include "model/profile.h"
#include "backend/backend.h"

namespace gpulab {
namespace {

using Json = nlohmann::json;

const char* const kEnvironment[] = {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "GPULAB_NODE", "GPULAB_CUDA_BUILD",
                                    "NVIDIA_VISIBLE_DEVICES"};

// The software profile the lesson runs under; a bad GPULAB_CUDA_BUILD is reported here
// and again, as the lesson's error, when CUDA starts.
Json profile_json() {
  try {
    return profile_to_json(active_profile());
  } catch (const std::exception& e) {
    return {{"error", e.what()}};
  }
}

Json env_snapshot() {
  Json env = Json::object();
  for (const char* name : kEnvironment) {
    const char* value = std::getenv(name);
    env[name] = value != nullptr ? Json(value) : Json(nullptr);
  }
  return env;
}

std::string device_string(const at::Tensor& tensor) {
  if (!tensor.defined()) return "undefined";
  return tensor.device().str();
}

// A CPU tensor's values as a checksum (FNV-1a over its bytes, hex), so the checks can tell
// which data a program worked on without trusting what it says; small tensors only. GPU
// tensors get none: copying them off the GPU would enter device guards, which on some
// profiles make contexts, and so change what the lesson observes.
constexpr std::int64_t kChecksumMaxElements = 1 << 16;
Json checksum_of(const at::Tensor& tensor) {
  if (!tensor.defined() || !tensor.device().is_cpu() || tensor.layout() != at::kStrided ||
      tensor.numel() > kChecksumMaxElements)
    return nullptr;  // a sparse tensor has no bytes of its own to read
  const at::Tensor values = tensor.detach().contiguous();
  const auto* byte = static_cast<const unsigned char*>(values.data_ptr());
  std::uint64_t hash = 14695981039346656037ull;
  for (std::size_t i = 0; i < values.nbytes(); ++i) hash = (hash ^ byte[i]) * 1099511628211ull;
  return fmt::format("{:016x}", hash);
}

std::string mib(std::uint64_t bytes) { return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / 1048576.0); }

// The exception's type and its message without LibTorch's C++ backtrace.
std::pair<std::string, std::string> describe(const std::exception& error) {
  const std::string type = c10::demangle(typeid(error).name());
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&error))
    return {type, c10_error->what_without_backtrace()};
  return {type, error.what()};
}

}  // namespace

std::vector<NamedTensor> tensors_of(const torch::nn::Module& module) {
  std::vector<NamedTensor> tensors;
  for (const auto& item : module.named_parameters()) tensors.emplace_back(item.key(), item.value());
  for (const auto& item : module.named_buffers()) tensors.emplace_back(item.key(), item.value());
  return tensors;
}

struct Lesson::Impl {
  Json report;
  std::unique_ptr<Observer> observer;
  WarningListener previous_listener;
};

Lesson::Lesson(std::string id, int argc, char** argv) : impl_(std::make_unique<Impl>()) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--json") json_ = true;
    else args_.push_back(arg);
  }
  impl_->observer = make_observer();
  impl_->report = {{"lesson", std::move(id)},
                   {"backend", backend_name(impl_->observer->backend())},
                   {"node", impl_->observer->node()},
                   {"profile", profile_json()},
                   {"pid", getpid()},
                   {"env", env_snapshot()},
                   {"facts", Json::object()},
                   {"observations", Json::array()},
                   {"errors", Json::array()},
                   {"warnings", Json::array()}};
  // PyTorch's warnings (DataParallel's imbalance warning...) go into the report too. They
  // are raised on the thread that constructs DataParallel, the lesson's own.
  impl_->previous_listener = set_warning_listener(
      [report = &impl_->report](const std::string& message) { (*report)["warnings"].push_back({{"message", message}}); });
  if (!json_) {
    const Json& profile = impl_->report["profile"];
    std::cout << fmt::format("lesson {} on node {} ({} backend), profile: {}\n", impl_->report["lesson"].get<std::string>(),
                             impl_->observer->node(), backend_name(impl_->observer->backend()),
                             profile.contains("name") ? profile["name"].get<std::string>() : profile["error"].get<std::string>())
              << std::flush;
  }
}

Lesson::~Lesson() { set_warning_listener(std::move(impl_->previous_listener)); }

void Lesson::observe(const std::string& label, const std::vector<NamedTensor>& tensors) {
  Json gpus = Json::array();
  std::string usage;
  for (const GpuView& gpu : impl_->observer->gpus()) {
    if (gpu.this_process_bytes == 0 && !gpu.this_process_context) continue;
    gpus.push_back({{"physical_index", gpu.physical_index},
                    {"used_bytes", gpu.this_process_bytes},
                    {"context", gpu.this_process_context}});
    usage += fmt::format("{}GPU {} {}", usage.empty() ? "" : ", ", gpu.physical_index, mib(gpu.this_process_bytes));
  }
  Json located = Json::array();
  std::string places;
  for (const auto& [name, tensor] : tensors) {
    const int physical = physical_index_of(tensor);
    located.push_back({{"name", name},
                       {"device", device_string(tensor)},
                       {"physical_index", physical >= 0 ? Json(physical) : Json(nullptr)}});
    if (Json checksum = checksum_of(tensor); !checksum.is_null()) located.back()["checksum"] = checksum;
    places += fmt::format("\n      {} is on {}{}", name, device_string(tensor),
                          physical >= 0 ? fmt::format(" = physical GPU {}", physical) : "");
  }
  impl_->report["observations"].push_back({{"label", label}, {"gpus", gpus}, {"tensors", located}});
  // The observing thread's current device, from CUDA's own state (not the program's word).
  if (const int current = current_device_if_started(); current >= 0) impl_->report["observations"].back()["current_device"] = current;
  if (!json_)
    std::cout << fmt::format("  [{}]\n      this process uses: {}{}\n", label, usage.empty() ? "no GPU" : usage, places)
              << std::flush;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> entries;
  if (text.empty()) return entries;
  for (std::size_t start = 0;;) {
    const auto end = text.find(separator, start);
    entries.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return entries;
    start = end + 1;
  }
}

std::vector<int> Lesson::int_list(const std::string& flag, std::vector<int> fallback) const {
  const auto at = std::find(args_.begin(), args_.end(), flag);
  if (at == args_.end()) return fallback;
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument(fmt::format("{} expects comma-separated integers such as 2,3: {}", flag, why));
  };
  if (std::next(at) == args_.end()) throw bad("nothing follows it");
  std::vector<int> values;
  std::istringstream entries(*std::next(at));
  for (std::string entry; std::getline(entries, entry, ',');) {
    std::size_t used = 0;
    try {
      values.push_back(std::stoi(entry, &used));
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != entry.size()) throw bad(fmt::format("'{}' is not an integer", entry));
  }
  if (values.empty()) throw bad("the list is empty");
  return values;
}

std::string Lesson::option(const std::string& flag, const std::string& fallback) const {
  const auto at = std::find(args_.begin(), args_.end(), flag);
  if (at == args_.end()) return fallback;
  if (std::next(at) == args_.end() || std::next(at)->empty())
    throw std::invalid_argument(fmt::format("{} expects a value, e.g. {} checkpoint.pt", flag, flag));
  return *std::next(at);
}

bool Lesson::attempt(const std::string& label, const std::function<void()>& step) {
  try {
    step();
    return true;
  } catch (const std::exception& error) {
    const auto [type, message] = describe(error);
    impl_->report["errors"].push_back({{"label", label}, {"type", type}, {"message", message}});
    if (!json_) std::cout << fmt::format("  [{}] raised {}:\n      {}\n", label, type, message) << std::flush;
    return false;
  }
}

void Lesson::say(const std::string& text) { (json_ ? std::cerr : std::cout) << text << '\n' << std::flush; }

void Lesson::fact(const std::string& key, std::int64_t value) {
  impl_->report["facts"][key] = value;
  if (!json_) std::cout << fmt::format("  {} = {}\n", key, value) << std::flush;
}

void Lesson::fact(const std::string& key, const std::string& value) {
  impl_->report["facts"][key] = value;
  if (!json_) std::cout << fmt::format("  {} = {}\n", key, value) << std::flush;
}

namespace {
// Under a launcher every rank prints its own report, interleaved with the others':
// GPULAB_REPORT_DIR collects them as one file per rank (rank<RANK>.json), written whole.
void write_report_file(const nlohmann::json& report) {
  const char* dir = std::getenv("GPULAB_REPORT_DIR");
  if (dir == nullptr || *dir == '\0') return;
  const char* rank = std::getenv("RANK");
  const std::string name = rank != nullptr && *rank != '\0' && std::string(rank).find('/') == std::string::npos
                               ? std::string("rank") + rank
                               : "pid" + std::to_string(getpid());
  const std::string path = std::string(dir) + "/" + name + ".json";
  {
    std::ofstream file(path + ".tmp");
    file << report.dump(2) << '\n';
    if (!file) {
      std::cerr << "gpulab: cannot write the lesson report to " << path << '\n';
      return;
    }
  }
  std::rename((path + ".tmp").c_str(), path.c_str());
}
}  // namespace

namespace {
// torchrun's TORCHELASTIC_ERROR_FILE: the error that ended this worker, in the format its
// @record decorator writes, so a launcher (torchrun or gpulab launch) can name the root
// cause. "peer_lost" marks a collective that broke because another rank went away first.
void write_error_file(const std::exception& error) {
  const char* path = std::getenv("TORCHELASTIC_ERROR_FILE");
  if (path == nullptr || *path == '\0') return;
  const auto [type, message] = describe(error);
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const nlohmann::json record = {
      {"message",
       {{"message", type + ": " + message},
        {"extraInfo", {{"py_callstack", ""}, {"timestamp", std::to_string(std::chrono::duration_cast<std::chrono::seconds>(now).count())}}}}},
      {"gpulab",
       {{"peer_lost", dynamic_cast<const distributed::PeerLost*>(&error) != nullptr},
        {"time_ms", std::chrono::duration_cast<std::chrono::milliseconds>(now).count()}}}};
  std::ofstream file(path);
  file << record.dump(2) << '\n';
}
}  // namespace

int Lesson::finish(int exit_code) {
  impl_->report["exit_code"] = exit_code;
  impl_->report["env_at_exit"] = env_snapshot();
  impl_->report["profile"] = profile_json();  // CUDA's, once it started: it read the variable then
  if (json_) std::cout << impl_->report.dump(2) << std::endl;
  write_report_file(impl_->report);
  return exit_code;
}

int run_lesson(const std::string& id, int argc, char** argv, const std::function<void(Lesson&)>& body) {
  // Still set here: the program was built without its prestart entry (report/prestart_entry.cpp,
  // which forks runs before the program's own initialisers) and main() is running in a
  // prestarted parent with the parent's arguments. Serve nothing: the client then starts
  // each run afresh.
  if (std::getenv("GPULAB_PRESTART") != nullptr) std::_Exit(0);
  std::unique_ptr<Lesson> lesson;
  try {
    lesson = std::make_unique<Lesson>(id, argc, argv);
  } catch (const std::exception& error) {
    std::cerr << "gpulab: lesson " << id << " cannot start: " << describe(error).second << '\n';
    return 2;
  }
  const bool ok = lesson->attempt("uncaught", [&] {
    try {
      body(*lesson);
    } catch (const std::exception& error) {
      write_error_file(error);
      throw;
    }
  });
  return lesson->finish(ok ? 0 : 1);
}

}  // namespace gpulab
