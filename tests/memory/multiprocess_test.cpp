// One node, many processes: every process on a node shares one state file (under
// GPULAB_STATE_DIR), sees the others' memory, and disappears from `gpulab smi` when it
// ends — even by SIGKILL, with nobody cleaning up — as processes do from nvidia-smi.
#include <algorithm>
#include <memory>
#include <sstream>

#include <catch2/catch.hpp>

#include "child.h"
#include "memory_support.h"

using namespace gpulab::test;

namespace {

// The physical GPU behind CUDA index `index` under CUDA_VISIBLE_DEVICES=`list`, on a node
// of identical GPUs (where CUDA's order is the PCI order): the list's entry.
int listed_gpu(const std::string& list, int index) {
  std::istringstream entries(list);
  std::string entry;
  for (int i = 0; i <= index; ++i) std::getline(entries, entry, ',');
  return std::stoi(entry);
}

}  // namespace

TEST_CASE("a plain LibTorch program holding 1 GiB on cuda:1 under CUDA_VISIBLE_DEVICES=2,3,4,5 shows in smi on "
          "physical GPU 3 only, and is gone once killed with SIGKILL",
          "[memory][multiprocess]") {
  const std::string visible = "2,3,4,5";
  const int gpu3 = listed_gpu(visible, 1);
  const gpulab::Gpu gpu = node().gpus[static_cast<std::size_t>(gpu3)];
  const std::uint64_t held = 1 * kGiB;
  const std::string state = fresh_state_dir();
  Child holder({bin("memory-hold"), "cuda:1", std::to_string(held / kMiB)}, state, {{"CUDA_VISIBLE_DEVICES", visible}});
  REQUIRE(holder.read_line() == "ready");

  const auto view = smi(state);
  CHECK(view.gpus_of(holder.pid()) == std::vector<int>{gpu3});
  CHECK(view.usage(gpu3, holder.pid()) >= held + gpu.context_bytes);
  CHECK(view.usage(gpu3, holder.pid()) == gpu.context_bytes + segment_bytes(held));
  for (int other = 0; other < static_cast<int>(node().gpus.size()); ++other)
    if (other != gpu3) CHECK(view.used(other) == 0);

  // Killed, and not even reaped yet (a zombie): its memory is already free, as on a real GPU.
  holder.kill_and_wait(/*reap=*/false);
  const auto after = smi(state);
  CHECK(after.gpus_of(holder.pid()).empty());
  CHECK(after.used(gpu3) == 0);
}

TEST_CASE("two processes on one physical GPU add up in smi, each with its own context, whatever index each uses",
          "[memory][multiprocess]") {
  const std::string state = fresh_state_dir();
  const std::string visible_a = "2,3,4,5";
  const std::string visible_b = "3";
  const int shared = listed_gpu(visible_a, 1);
  REQUIRE(listed_gpu(visible_b, 0) == shared);
  const std::uint64_t context = node().gpus[static_cast<std::size_t>(shared)].context_bytes;
  const std::uint64_t held_a = 512 * kMiB;
  const std::uint64_t held_b = 256 * kMiB;
  Child a({bin("memory-hold"), "cuda:1", std::to_string(held_a / kMiB)}, state, {{"CUDA_VISIBLE_DEVICES", visible_a}});
  REQUIRE(a.read_line() == "ready");
  Child b({bin("memory-hold"), "cuda:0", std::to_string(held_b / kMiB)}, state, {{"CUDA_VISIBLE_DEVICES", visible_b}});
  REQUIRE(b.read_line() == "ready");

  const auto both = smi(state);
  auto pids = both.pids(shared);
  std::sort(pids.begin(), pids.end());
  auto expected = std::vector<int>{a.pid(), b.pid()};
  std::sort(expected.begin(), expected.end());
  CHECK(pids == expected);
  CHECK(both.usage(shared, a.pid()) == context + segment_bytes(held_a));
  CHECK(both.usage(shared, b.pid()) == context + segment_bytes(held_b));
  CHECK(both.used(shared) == 2 * context + segment_bytes(held_a) + segment_bytes(held_b));

  // A normal exit leaves the node too.
  a.close_stdin();
  CHECK(a.wait().exit_code == 0);
  const auto one = smi(state);
  CHECK(one.pids(shared) == std::vector<int>{b.pid()});
  CHECK(one.used(shared) == context + segment_bytes(held_b));
}

TEST_CASE("several processes allocating and freeing on one GPU at the same time keep the node's totals consistent",
          "[memory][multiprocess][concurrency]") {
  // tiny2's 2 GiB GPU 0, four processes of up to four tensors of up to 300 MiB each: they
  // run out of memory now and then, which is part of the exercise.
  const Env tiny2 = {{"GPULAB_NODE", "tiny2"}};
  const gpulab::Gpu gpu = node("tiny2").gpus[0];
  constexpr int kProcesses = 4;
  constexpr int kSteps = 150;
  const std::uint64_t max_bytes = 300 * kMiB;
  const std::string state = fresh_state_dir();
  std::vector<std::unique_ptr<Child>> churners;
  std::vector<std::uint64_t> final_bytes;
  for (int i = 0; i < kProcesses; ++i) {
    final_bytes.push_back(64 * kMiB + static_cast<std::uint64_t>(i) * 3 * kMiB + 1);
    churners.push_back(std::make_unique<Child>(
        std::vector<std::string>{bin("memory-churn"), "0", std::to_string(kSteps), std::to_string(i + 1),
                                 std::to_string(max_bytes), std::to_string(final_bytes.back())},
        state, tiny2));
  }
  std::uint64_t finals = 0;
  for (std::size_t i = 0; i < final_bytes.size(); ++i) finals += gpu.context_bytes + segment_bytes(final_bytes[i]);
  REQUIRE(finals <= gpu.capacity_bytes);  // the final tensors all fit together

  for (auto& churner : churners) REQUIRE(churner->read_line() == "ready");
  for (auto& churner : churners) churner->write_line("go");  // all at once
  for (auto& churner : churners) REQUIRE(churner->read_line() == "finished");
  for (auto& churner : churners) churner->write_line("final");
  std::vector<nlohmann::json> reports;
  for (auto& churner : churners) {
    const std::string line = churner->read_line();
    INFO("report: " << line);
    reports.push_back(nlohmann::json::parse(line));
  }

  const auto view = smi(state, tiny2);
  std::uint64_t total = 0;
  for (int i = 0; i < kProcesses; ++i) {
    const auto& report = reports[static_cast<std::size_t>(i)];
    const int pid = churners[static_cast<std::size_t>(i)]->pid();
    INFO("process " << pid << ": " << report.dump());
    CHECK(report.at("pid") == pid);
    CHECK(report.at("violations") == 0);
    CHECK(report.at("steps") == kSteps);
    CHECK(report.at("reserved") == segment_bytes(final_bytes[static_cast<std::size_t>(i)]));
    CHECK(view.usage(0, pid) == gpu.context_bytes + report.at("reserved").get<std::uint64_t>());
    total += view.usage(0, pid);
  }
  CHECK(view.pids(0).size() == static_cast<std::size_t>(kProcesses));
  CHECK(view.used(0) == total);
  CHECK(view.used(0) <= gpu.capacity_bytes);
  CHECK(view.used(1) == 0);

  for (auto& churner : churners) churner->close_stdin();
  for (auto& churner : churners) CHECK(churner->wait().exit_code == 0);
  CHECK(smi(state, tiny2).used(0) == 0);
}
