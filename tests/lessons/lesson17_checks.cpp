// Lesson 17: inside a container (NVIDIA_VISIBLE_DEVICES), CUDA and nvidia-smi number the
// container's GPUs from 0, in PCI bus order, and CUDA_VISIBLE_DEVICES counts in those numbers
// (docs/reference.md, "Containers and schedulers"). The learner makes the program report the
// GPU it trains on in the host's terms: its UUID and the host nvidia-smi's number (the task),
// its PCI bus id as nvidia-smi writes it (the stretch). The checks run several container
// views — index lists in and out of PCI order, UUID and bus id lists, CUDA_VISIBLE_DEVICES
// inside, dgx-a100, workstation-mixed and aws-p4d — and compare every claim with the host GPU
// the batch was observed on from outside, and with the host GPU each scenario names.
// The simulated node only: on real GPUs the container runtime applies the variable.
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "expect.h"
#include "lesson_run.h"

using namespace gpulab::test;

namespace {

// One container: the node, NVIDIA_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES inside (or unset),
// the CUDA device the program trains on, and the host GPU that device is (worked out by hand
// from the node file: the container's GPUs in PCI order, then CUDA's order among them).
struct Container {
  std::string node;
  std::string nvidia_visible_devices;
  std::optional<std::string> cuda_visible_devices;
  int gpu;
  int host_gpu;
};

std::string host_uuids(const std::string& node_name) {
  std::string list;
  for (const auto& gpu : node(node_name).gpus) list += (list.empty() ? "" : ",") + gpu.uuid;
  return list;
}

std::string uuid_of(const std::string& node_name, int host_gpu) {
  return node(node_name).gpus.at(static_cast<std::size_t>(host_gpu)).uuid;
}

std::string described(const Container& c) {
  return " (" + c.node + ", NVIDIA_VISIBLE_DEVICES=" + c.nvidia_visible_devices +
         (c.cuda_visible_devices ? ", CUDA_VISIBLE_DEVICES=" + *c.cuda_visible_devices + " inside" : std::string()) +
         ", training on cuda:" + std::to_string(c.gpu) + ")";
}

LessonRun run_in(const Container& c, const std::string& listed_uuids) {
  return run_scenario("17",
                    {{"GPULAB_NODE", c.node},
                     {"NVIDIA_VISIBLE_DEVICES", c.nvidia_visible_devices},
                     {"CUDA_VISIBLE_DEVICES", c.cuda_visible_devices}},
                    {"--host-uuids", listed_uuids, "--gpu", std::to_string(c.gpu)});
}

LessonRun run_in(const Container& c) { return run_in(c, host_uuids(c.node)); }

// The batch is where the scenario says (the container's view holds), and the program's two
// claims name that host GPU.
void check_report(const Container& c) {
  const std::string when = described(c);
  const auto run = run_in(c);
  const int observed = run.physical_of("training", "batch");
  require_that(observed == c.host_gpu, "the batch " + placement(c.host_gpu) + when, "it is " + placement(observed));
  const auto& number = run.fact("trains_on_host_gpu");
  expect_that(number == c.host_gpu, "reported as the host's GPU " + std::to_string(c.host_gpu) + when,
              "reported as " + number.dump());
  const auto& uuid = run.fact("trains_on_uuid");
  expect_that(uuid == uuid_of(c.node, c.host_gpu), "reported by its UUID " + uuid_of(c.node, c.host_gpu) + when,
              "reported " + uuid.dump());
}

void check_bus_id(const Container& c) {
  const std::string when = described(c);
  const auto run = run_in(c);
  const int observed = run.physical_of("training", "batch");
  require_that(observed == c.host_gpu, "the batch " + placement(c.host_gpu) + when, "it is " + placement(observed));
  const std::string expected = node(c.node).gpus.at(static_cast<std::size_t>(c.host_gpu)).pci_bus_id;
  const auto& bus_id = run.fact("trains_on_bus_id");
  expect_that(bus_id == expected, "reported by the host's bus id " + expected + when, "reported " + bus_id.dump());
}

bool simulated_only() {
  if (simulated()) return true;
  WARN("needs the simulated node: on real GPUs NVIDIA_VISIBLE_DEVICES is the container runtime's, not the program's");
  return false;
}

}  // namespace

TEST_CASE("a list out of PCI order: cuda:0 and cuda:1 reported as the host GPUs they are", "[lesson17]") {
  if (!simulated_only()) return;
  check_report({"dgx-a100", "6,2", std::nullopt, 1, 6});
  check_report({"dgx-a100", "6,2", std::nullopt, 0, 2});
}

TEST_CASE("CUDA_VISIBLE_DEVICES inside counts in the container's GPUs", "[lesson17]") {
  if (!simulated_only()) return;
  check_report({"dgx-a100", "2,3", std::string("1"), 0, 3});
}

TEST_CASE("a container given GPUs by UUID and by PCI bus id", "[lesson17]") {
  if (!simulated_only()) return;
  const std::string uuids = uuid_of("dgx-a100", 5) + "," + uuid_of("dgx-a100", 1);
  check_report({"dgx-a100", uuids, std::nullopt, 1, 5});
  // Two GPUs on each PCI bus: 00000000:90:1D.0 is host GPU 5.
  check_report({"aws-p4d", "00000000:90:1D.0,3", std::nullopt, 1, 5});
}

TEST_CASE("mixed GPUs: CUDA's fastest-first order among the container's GPUs", "[lesson17]") {
  if (!simulated_only()) return;
  // workstation-mixed: GPU 0 a GTX 1080 Ti, GPU 2 an RTX 3090: the 3090 is cuda:0.
  check_report({"workstation-mixed", "0,2", std::nullopt, 0, 2});
}

TEST_CASE("a host list that lacks the GPU: -1, not a number of another GPU", "[lesson17]") {
  if (!simulated_only()) return;
  // The operator's list was taken before host GPU 6's board was swapped: its line 6 holds the
  // old board's UUID (here one of aws-p4d's), so no line names the GPU the program trains on.
  const Container c{"dgx-a100", "6,2", std::nullopt, 1, 6};
  std::string stale;
  for (int k = 0; k < 8; ++k) stale += (k == 0 ? "" : ",") + (k == 6 ? uuid_of("aws-p4d", 6) : uuid_of(c.node, k));
  const std::string when = described(c) + " with a host list whose line 6 names an older board";
  const auto run = run_in(c, stale);
  const int observed = run.physical_of("training", "batch");
  require_that(observed == c.host_gpu, "the batch " + placement(c.host_gpu) + when, "it is " + placement(observed));
  const auto& number = run.fact("trains_on_host_gpu");
  expect_that(number == -1, "reported as -1: the host's list names no such GPU" + when, "reported as " + number.dump());
  const auto& uuid = run.fact("trains_on_uuid");
  expect_that(uuid == uuid_of(c.node, c.host_gpu), "still reported by its UUID " + uuid_of(c.node, c.host_gpu) + when,
              "reported " + uuid.dump());
}

TEST_CASE("stretch: the host's bus id, as nvidia-smi writes it", "[lesson17][stretch]") {
  if (!simulated_only()) return;
  check_bus_id({"dgx-a100", "6,2", std::nullopt, 1, 6});
  check_bus_id({"aws-p4d", "00000000:90:1D.0,3", std::nullopt, 1, 5});
  check_bus_id({"workstation-mixed", "0,2", std::string("1"), 0, 0});
}
