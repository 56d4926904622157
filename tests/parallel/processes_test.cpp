// DataParallel seen from outside the program, as nvidia-smi sees it: which physical GPUs a
// process uses under CUDA_VISIBLE_DEVICES, the stray context on GPU 0, the imbalance warning
// on a mixed node. Expectations come from the node files and the scenario.
#include <algorithm>
#include <set>

#include <catch2/catch.hpp>

#include "child.h"
#include "gpulab/data_parallel.h"
#include "memory_support.h"

using namespace gpulab::test;

namespace {

// The physical GPU of the visible list's entry `index` (integer entries count CUDA's order).
int listed_physical(const std::vector<int>& list, int index, const Env& env = {}) {
  return cuda_order(env).at(static_cast<std::size_t>(list.at(static_cast<std::size_t>(index))));
}

LessonRun dp_probe(const std::vector<std::string>& args, const Env& env = {}) {
  auto run = run_report_program(bin("dp-probe"), args, env, 120);
  INFO("stderr:\n" << run.process.err);
  REQUIRE(run.report.value("exit_code", -1) == 0);
  return run;
}

std::vector<std::string> warnings_of(const LessonRun& run) {
  std::vector<std::string> texts;
  for (const auto& warning : run.report.at("warnings")) texts.push_back(warning.at("message"));
  return texts;
}

}  // namespace

TEST_CASE("a plain program using data_parallel under CUDA_VISIBLE_DEVICES=2,3,4,5 with devices {cuda:1, cuda:3} "
          "shows in smi on physical GPUs 3 and 5 only",
          "[parallel][processes]") {
  const std::vector<int> visible{2, 3, 4, 5};
  const Env env{{"CUDA_VISIBLE_DEVICES", "2,3,4,5"}};
  const std::set<int> expected{listed_physical(visible, 1), listed_physical(visible, 3)};
  const std::string state = fresh_state_dir();
  Child program({bin("dp-plain")}, state, env);
  CHECK(program.read_line() == "output on cuda:1; ready");

  const auto view = smi(state);
  const auto gpus = view.gpus_of(program.pid());
  CHECK(std::set<int>(gpus.begin(), gpus.end()) == expected);
  for (int gpu : expected) CHECK(view.usage(gpu, program.pid()) > node().gpus[static_cast<std::size_t>(gpu)].context_bytes);
  program.close_stdin();
  CHECK(program.wait().exit_code == 0);
}

TEST_CASE("the article's setup plus an index-less torch::kCUDA puts a context on GPU 0 under every profile, an "
          "index-less synchronize() only before PyTorch 2.1, and set_device first keeps GPU 0 clean",
          "[parallel][processes]") {
  const int gpu0 = cuda_order().at(0);
  const std::set<int> used{cuda_order().at(2), cuda_order().at(3)};
  std::set<int> with_gpu0 = used;
  with_gpu0.insert(gpu0);
  const auto contexts = [](const LessonRun& run, const std::string& label) {
    const auto list = run.contexts(label);
    return std::set<int>(list.begin(), list.end());
  };
  const auto context_bytes = node().gpus[static_cast<std::size_t>(gpu0)].context_bytes;

  const auto stray = dp_probe({"article"});
  const gpulab::Profile profile = profile_of(stray.report);
  INFO("profile: " << profile.name());
  CHECK(contexts(stray, "after the step") == used);
  // synchronize() waits on the runtime's current device. Before 2.1 every guard was left
  // with cudaSetDevice(0), so that is GPU 0; from 2.1 MaybeSetDevice(0) leaves the runtime
  // on the last device a guard entered (PR 94864).
  if (profile.guard_restore_sets_device()) {
    CHECK(contexts(stray, "after synchronize") == with_gpu0);
    CHECK(stray.usage("after synchronize").at(gpu0) == context_bytes);  // a context, no data
  } else {
    CHECK(contexts(stray, "after synchronize") == used);
  }
  // torch::kCUDA means PyTorch's current device, 0 on this thread: a context and the
  // labels' 2 MiB segment on GPU 0, and still no tensor of the model there.
  CHECK(contexts(stray, "after index-less labels") == with_gpu0);
  CHECK(stray.usage("after index-less labels").at(gpu0) == context_bytes + segment_bytes(64 * sizeof(std::int64_t)));
  for (const auto& tensor : stray.observation("after index-less labels").at("tensors"))
    CHECK(tensor.at("physical_index") == cuda_order().at(2));

  const auto fixed = dp_probe({"article", "--set-device"});
  CHECK(contexts(fixed, "after synchronize") == used);
  CHECK(contexts(fixed, "after index-less labels") == used);
}

TEST_CASE("on workstation-mixed DataParallel warns about the GPU with the least memory, then about cores",
          "[parallel][processes]") {
  const Env env{{"GPULAB_NODE", "workstation-mixed"}};
  const gpulab::Node mixed = node("workstation-mixed");
  const std::vector<int> order = cuda_order(env);  // cuda:i is physical order[i]
  // Python's min()/max() over the devices' total memory: the first extreme position.
  const auto extreme = [&](const std::vector<int>& ids, auto value) {
    std::size_t low = 0, high = 0;
    for (std::size_t i = 1; i < ids.size(); ++i) {
      if (value(ids[i]) < value(ids[low])) low = i;
      if (value(ids[i]) > value(ids[high])) high = i;
    }
    return std::make_pair(ids[low], ids[high]);
  };
  const auto memory = [&](int id) { return mixed.gpus[static_cast<std::size_t>(order[static_cast<std::size_t>(id)])].total_bytes; };
  const auto cores = [&](int id) { return mixed.gpus[static_cast<std::size_t>(order[static_cast<std::size_t>(id)])].sm_count; };

  const auto all = dp_probe({"balance", "all"}, env);
  const auto [smallest, largest] = extreme({0, 1, 2, 3}, memory);
  REQUIRE(static_cast<double>(memory(smallest)) / static_cast<double>(memory(largest)) < 0.75);
  CHECK(warnings_of(all) == std::vector<std::string>{gpulab::parallel::imbalance_message(smallest, largest)});
  CHECK_THAT(all.process.err, Catch::Contains("UserWarning: \n    There is an imbalance between your GPUs."));

  // The two GPUs with the most memory: balanced in memory, so the cores decide.
  std::vector<int> ids{0, 1, 2, 3};
  std::sort(ids.begin(), ids.end(), [&](int a, int b) { return memory(a) > memory(b); });
  ids.resize(2);
  REQUIRE(static_cast<double>(std::min(memory(ids[0]), memory(ids[1]))) /
              static_cast<double>(std::max(memory(ids[0]), memory(ids[1]))) >= 0.75);
  const auto [fewer, more] = extreme(ids, cores);
  const auto big_two = dp_probe({"balance", std::to_string(ids[0]) + "," + std::to_string(ids[1])}, env);
  if (static_cast<double>(cores(fewer)) / static_cast<double>(cores(more)) < 0.75)
    CHECK(warnings_of(big_two) == std::vector<std::string>{gpulab::parallel::imbalance_message(fewer, more)});
  else
    CHECK(warnings_of(big_two).empty());

  CHECK(warnings_of(dp_probe({"balance", "all"})).empty());  // dgx-a100: eight alike
}
