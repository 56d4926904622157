#include "memory_support.h"

#include <iomanip>
#include <sstream>

#include <catch2/catch.hpp>

namespace gpulab::test {

std::string pytorch_size(std::uint64_t bytes) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(2);
  if (bytes <= 1024) out << bytes << " bytes";
  else if (bytes <= kMiB) out << static_cast<double>(bytes) / 1024.0 << " KiB";
  else if (bytes <= kGiB) out << static_cast<double>(bytes) / static_cast<double>(kMiB) << " MiB";
  else out << static_cast<double>(bytes) / static_cast<double>(kGiB) << " GiB";
  return out.str();
}

std::string oom_message(const Profile& profile, std::uint64_t tried, int cuda_index, std::uint64_t total,
                        std::uint64_t free, const std::vector<ProcessInUse>& processes, std::uint64_t allocated,
                        std::uint64_t reserved) {
  const std::string head = "CUDA out of memory. Tried to allocate " + pytorch_size(tried);
  const std::string gpu = std::to_string(cuda_index);
  if (!profile.torch_at_least(2, 1))  // c10/cuda/CUDACachingAllocator.cpp, 1.13 and 2.0
    return head + " (GPU " + gpu + "; " + pytorch_size(total) + " total capacity; " + pytorch_size(allocated) +
           " already allocated; " + pytorch_size(free) + " free; " + pytorch_size(reserved) +
           " reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb "
           "to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF";
  // From 2.1 (PR 99699): NVML's processes, and "capacty" (sic) in 2.1 itself.
  std::string text = head + ". GPU " + gpu + (profile.torch_at_least(2, 2) ? " has a total capacity of " : " has a total capacty of ") +
                     pytorch_size(total) + " of which " + pytorch_size(free) + " is free. ";
  for (const auto& process : processes)
    text += (process.pid == 0 ? std::string("Including non-PyTorch memory, this process")
                              : "Process " + std::to_string(process.pid)) +
            " has " + pytorch_size(process.bytes) + " memory in use. ";
  text += "Of the allocated memory " + pytorch_size(allocated) + " is allocated by PyTorch, and " +
          pytorch_size(reserved - allocated) + " is reserved by PyTorch but unallocated. If reserved but unallocated "
          "memory is large try setting ";
  if (!profile.torch_at_least(2, 2))
    return text + "max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and "
                  "PYTORCH_CUDA_ALLOC_CONF";
  text += "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory "
          "Management  (";
  if (!profile.torch_at_least(2, 11)) return text + "https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)";
  return text + "https://docs.pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)";
}

Profile profile_of(const nlohmann::json& report) {
  INFO("report: " << report.dump());
  REQUIRE(report.contains("profile"));
  const auto& profile = report.at("profile");
  REQUIRE(profile.contains("torch"));
  const auto parsed = parse_torch_version(profile.at("torch").get<std::string>());
  REQUIRE(parsed);
  Profile result = *parsed;
  result.cuda_runtime = profile.at("cuda_runtime").get<int>();
  return result;
}

std::string bin(const std::string& name) { return bin_dir() + "/" + name; }

LessonRun probe(const std::vector<std::string>& args, const Env& env) {
  return run_report_program(bin("memory-probe"), args, env, /*timeout_s=*/60);
}

Smi smi(const std::string& state_dir, const Env& env) {
  ProcessOptions options;
  options.argv = {bin("gpulab"), "smi", "--json"};
  options.env = {{"CUDA_VISIBLE_DEVICES", std::nullopt}, {"GPULAB_NODE", std::nullopt}, {"GPULAB_STATE_DIR", state_dir}};
  options.env.insert(options.env.end(), env.begin(), env.end());
  options.timeout_s = 60;
  ProcessResult result = run_process(options);
  INFO("gpulab smi " << result.outcome(options.timeout_s) << "\nstdout:\n" << result.out << "\nstderr:\n" << result.err);
  REQUIRE(result.ok());
  Smi view;
  view.report = nlohmann::json::parse(result.out, nullptr, /*allow_exceptions=*/false);
  REQUIRE_FALSE(view.report.is_discarded());
  view.err = result.err;
  return view;
}

std::uint64_t Smi::usage(int physical, int pid) const {
  for (const auto& process : report.at("gpus").at(static_cast<std::size_t>(physical)).at("processes"))
    if (process.at("pid").get<int>() == pid) return process.at("used_bytes").get<std::uint64_t>();
  return 0;
}

std::vector<int> Smi::pids(int physical) const {
  std::vector<int> pids;
  for (const auto& process : report.at("gpus").at(static_cast<std::size_t>(physical)).at("processes"))
    pids.push_back(process.at("pid").get<int>());
  return pids;
}

std::uint64_t Smi::used(int physical) const {
  return report.at("gpus").at(static_cast<std::size_t>(physical)).at("used_bytes").get<std::uint64_t>();
}

std::vector<int> Smi::gpus_of(int pid) const {
  std::vector<int> gpus;
  for (const auto& gpu : report.at("gpus"))
    for (const auto& process : gpu.at("processes"))
      if (process.at("pid").get<int>() == pid) gpus.push_back(gpu.at("physical_index").get<int>());
  return gpus;
}

}  // namespace gpulab::test
