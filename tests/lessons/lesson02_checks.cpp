// Lesson 02: CUDA_VISIBLE_DEVICES renumbers the listed GPUs 0..n-1 in list order, so cuda:i
// is the i-th listed physical GPU (claims A1.2, A2.6).
#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "lesson_run.h"

using namespace gpulab::test;

namespace {
// Runs the lesson under `env`; checks it used every visible GPU and that cuda:i is listed[i].
void check_renumbering(const Env& env, const std::vector<int>& listed) {
  const auto run = run_lesson("02", env);
  CHECK(run.errors("uncaught").empty());
  CHECK(run.process.exit_code == 0);
  CHECK(run.fact("device_count") == static_cast<std::int64_t>(listed.size()));
  for (std::size_t i = 0; i < listed.size(); ++i) {
    INFO("cuda:" << i);
    CHECK(run.physical_of("x on cuda:" + std::to_string(i), "x") == listed[i]);
  }
  // nvidia-smi shows this process on the listed GPUs and nowhere else.
  std::vector<int> used;
  for (const auto& [physical, bytes] : run.usage("x on cuda:" + std::to_string(listed.size() - 1)))
    if (bytes > 0) used.push_back(physical);
  std::vector<int> expected = listed;
  std::sort(expected.begin(), expected.end());
  CHECK(used == expected);
}
}  // namespace

TEST_CASE("under CUDA_VISIBLE_DEVICES=2,3,4,5 the process sees 4 GPUs and cuda:i is physical GPU 2+i",
          "[lesson02]") {
  check_renumbering({{"CUDA_VISIBLE_DEVICES", "2,3,4,5"}}, {2, 3, 4, 5});
}

TEST_CASE("visible GPUs are numbered in list order, not in physical order", "[lesson02]") {
  check_renumbering({{"CUDA_VISIBLE_DEVICES", "5,1,6"}}, {5, 1, 6});
}

TEST_CASE("with CUDA_VISIBLE_DEVICES unset cuda:i is physical GPU i, for every GPU of the node", "[lesson02]") {
  for (const std::string name : {"dgx-a100", "tiny2"}) {
    INFO("node " << name);
    std::vector<int> all(node(name).gpus.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
    check_renumbering({{"GPULAB_NODE", name}}, all);
  }
}
