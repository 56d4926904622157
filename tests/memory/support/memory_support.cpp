#include "memory_support.h"

#include <catch2/catch.hpp>

#include "model/cuda_messages.h"

namespace gpulab::test {

std::string pytorch_size(std::uint64_t bytes) { return format_size(bytes); }

// The layout (literal pieces, per release) is the model's, held to the released binaries in
// tests/unit/model/cuda_messages_test.cpp; what these tests compute on their own is the
// figures between the pieces.
std::string oom_message(const Profile& profile, std::uint64_t tried, int cuda_index, std::uint64_t total,
                        std::uint64_t free, const std::vector<ProcessInUse>& processes, std::uint64_t allocated,
                        std::uint64_t reserved) {
  OomFigures figures;
  figures.cuda_index = cuda_index;
  figures.tried = tried;
  figures.total = total;
  figures.free = free;
  figures.allocated = allocated;
  figures.reserved = reserved;
  for (const ProcessInUse& process : processes) figures.processes.push_back({process.pid, process.pid == 0, process.bytes});
  return out_of_memory_message(profile, figures);
}

std::vector<std::string> cuda_builds_to_try() {
  const auto linked = parse_torch_version(GPULAB_LINKED_TORCH);
  const auto release = linked ? shipped_release(linked->torch_major, linked->torch_minor) : std::nullopt;
  INFO("linked LibTorch " << GPULAB_LINKED_TORCH);
  REQUIRE(release);
  std::vector<std::string> builds;
  for (const CudaVersion& build : builds_per_cuda_major(*release)) builds.push_back(build.text());
  return builds;
}

Profile profile_of(const nlohmann::json& report) {
  INFO("report: " << report.dump());
  REQUIRE(report.contains("profile"));
  const auto& profile = report.at("profile");
  const auto parsed = profile_from_json(profile);
  REQUIRE(parsed);
  return *parsed;
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
