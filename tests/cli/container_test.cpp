// A container's view of the simulated node (docs/reference.md, "Containers and schedulers"),
// from outside, as built: `gpulab devices` and `gpulab smi` under NVIDIA_VISIBLE_DEVICES, and
// `gpulab smi --host` while a program in the container holds memory.
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "child.h"
#include "lesson_run.h"
#include "model/node.h"
#include "proc/process.h"

using namespace gpulab;
using namespace gpulab::test;

namespace {

ProcessResult gpulab_cli(const std::vector<std::string>& args, const Env& env, const std::string& state) {
  ProcessOptions options;
  options.argv = {bin_dir() + "/gpulab"};
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  options.env = {{"CUDA_VISIBLE_DEVICES", std::nullopt}, {"CUDA_DEVICE_ORDER", std::nullopt},
                 {"GPULAB_NODE", std::nullopt},          {"NVIDIA_VISIBLE_DEVICES", std::nullopt},
                 {"GPULAB_HOST", std::nullopt},          {"GPULAB_STATE_DIR", state}};
  options.env.insert(options.env.end(), env.begin(), env.end());
  options.timeout_s = 120;
  return run_process(options);
}

#define SHOW(result) INFO("exit " << (result).exit_code << "\nstdout:\n" << (result).out << "\nstderr:\n" << (result).err)

const Node& host() {
  static const Node node = load_node_file(resolve_node_path(kDefaultNodeName));
  return node;
}

}  // namespace

TEST_CASE("under NVIDIA_VISIBLE_DEVICES=2,3, CUDA_VISIBLE_DEVICES=1 shows one GPU: the host's GPU 3, by UUID", "[container]") {
  const std::string state = fresh_state_dir();
  const auto devices =
      gpulab_cli({"devices", "--json"}, {{"NVIDIA_VISIBLE_DEVICES", "2,3"}, {"CUDA_VISIBLE_DEVICES", "1"}}, state);
  SHOW(devices);
  REQUIRE(devices.exit_code == 0);
  const auto document = nlohmann::json::parse(devices.out);
  REQUIRE(document.at("devices").size() == 1);
  const auto& only = document.at("devices").at(0);
  CHECK(only.at("cuda_index") == 0);
  CHECK(only.at("container_index") == 1);
  CHECK(only.at("physical_index") == 3);
  CHECK(only.at("uuid") == host().gpus[3].uuid);
  CHECK(only.at("pci_bus_id") == host().gpus[3].pci_bus_id);
  CHECK(document.at("container_gpus") == 2);

  const auto table = gpulab_cli({"devices"}, {{"NVIDIA_VISIBLE_DEVICES", "2,3"}, {"CUDA_VISIBLE_DEVICES", "1"}}, state);
  SHOW(table);
  CHECK(table.out.find("container: NVIDIA_VISIBLE_DEVICES=2,3") != std::string::npos);
  CHECK(table.out.find("GPU 1      GPU 3") != std::string::npos);
  CHECK(table.out.find(host().gpus[3].uuid) != std::string::npos);
}

TEST_CASE("a container's process: inside, nvidia-smi sees its GPUs renumbered; --host sees it on physical GPU 3",
          "[container]") {
  const std::string state = fresh_state_dir();
  const std::uint64_t held = 300;  // MiB
  Child holder({bin_dir() + "/memory-hold", "cuda:1", std::to_string(held)}, state, {{"NVIDIA_VISIBLE_DEVICES", "2,3"}});
  REQUIRE(holder.read_line() == "ready");

  const auto outside = gpulab_cli({"smi", "--host", "--json"}, {{"NVIDIA_VISIBLE_DEVICES", "2,3"}}, state);
  SHOW(outside);
  REQUIRE(outside.exit_code == 0);
  const auto host_view = nlohmann::json::parse(outside.out);
  REQUIRE(host_view.at("gpus").size() == 8);
  int gpu = -1;
  for (const auto& g : host_view.at("gpus"))
    for (const auto& p : g.at("processes"))
      if (p.at("pid").get<int>() == holder.pid()) {
        gpu = g.at("physical_index").get<int>();
        CHECK(p.at("used_bytes").get<std::uint64_t>() >= held * kMiB);
      }
  CHECK(gpu == 3);

  const auto inside = gpulab_cli({"smi", "--json"}, {{"NVIDIA_VISIBLE_DEVICES", "2,3"}}, state);
  SHOW(inside);
  REQUIRE(inside.exit_code == 0);
  const auto container_view = nlohmann::json::parse(inside.out);
  REQUIRE(container_view.at("gpus").size() == 2);
  const auto& second = container_view.at("gpus").at(1);
  CHECK(second.at("physical_index") == 1);
  CHECK(second.at("uuid") == host().gpus[3].uuid);
  CHECK(second.at("used_bytes").get<std::uint64_t>() >= held * kMiB);  // the memory shows
  CHECK(second.at("processes").empty());                               // the host PIDs do not

  const auto table = gpulab_cli({"smi"}, {{"NVIDIA_VISIBLE_DEVICES", "2,3"}}, state);
  SHOW(table);
  CHECK(table.out.find("inside a container: NVIDIA_VISIBLE_DEVICES=2,3") != std::string::npos);
  CHECK(table.out.find("PID namespace") != std::string::npos);
}

TEST_CASE("NVIDIA_VISIBLE_DEVICES naming a GPU the host lacks is a clear error, never a crash", "[container]") {
  const std::string state = fresh_state_dir();
  for (const char* command : {"devices", "smi"}) {
    const auto run = gpulab_cli({command}, {{"NVIDIA_VISIBLE_DEVICES", "2,9"}}, state);
    SHOW(run);
    CHECK(run.exit_code == 2);
    CHECK(run.err.find("NVIDIA_VISIBLE_DEVICES=2,9") != std::string::npos);
    CHECK(run.err.find("9: unknown device") != std::string::npos);
  }
  Child holder({bin_dir() + "/memory-hold", "cuda:0", "1"}, state, {{"NVIDIA_VISIBLE_DEVICES", "GPU-nope"}});
  (void)holder.wait();
  CHECK(holder.err().find("NVIDIA_VISIBLE_DEVICES=GPU-nope") != std::string::npos);
  const auto none = gpulab_cli({"smi"}, {{"NVIDIA_VISIBLE_DEVICES", "void"}}, state);
  SHOW(none);
  CHECK(none.exit_code != 0);
  CHECK(none.err.find("not a GPU container") != std::string::npos);
}
