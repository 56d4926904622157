// fork() and the simulated CUDA: a child forked after its parent started CUDA cannot use
// it, as on a real GPU (docs/reference.md, "fork after CUDA init"); a child forked before is
// a CUDA process of its own; and no child ever changes what nvidia-smi shows of its parent.
#include <catch2/catch.hpp>

#include <string>

#include "model/cuda_messages.h"
#include "model/profile.h"
#include "sim_support.h"
#include "backend/backend.h"

using namespace gpulab::test;

namespace {

// The pids nvidia-smi lists on physical GPU `gpu` in a `smi` step's result.
std::vector<int> pids_on(const nlohmann::json& smi, int gpu) {
  std::vector<int> pids;
  const std::string key = std::to_string(gpu);
  if (smi.at("gpus").contains(key))
    for (const auto& process : smi.at("gpus").at(key)) pids.push_back(process.at("pid").get<int>());
  return pids;
}

}  // namespace

TEST_CASE("a child forked after CUDA started gets CUDA's initialization error, in the linked release's words",
          "[sim][fork]") {
  const gpulab::Profile profile = gpulab::active_profile();
  INFO(profile.name());
  const auto results = probe({}, {"ones:cuda:1", "smi", "fork:ones:cuda:1", "fork:ones:cuda", "fork:count",
                                  "fork:setenv:CUDA_VISIBLE_DEVICES=3+ones:cuda:0", "ones:cuda:2", "smi"});
  INFO(results.dump(2));
  REQUIRE(results[0]["physical"] == 1);
  const int parent = results[1]["pid"];
  const std::vector<int> parent_only{parent};
  REQUIRE(pids_on(results[1], 1) == parent_only);

  // cudaGetDevice, cudaSetDevice, cudaMalloc: every call fails with error 3, as C10_CUDA_CHECK words it.
  const gpulab::CudaErrorCode init{3, "cudaErrorInitializationError", "initialization error"};
  const std::string expected = gpulab::cuda_error_message(profile, init, /*launch_blocking=*/false);
  for (const int step : {2, 3}) {
    const auto& child = results[step]["child"];
    CHECK(child.value("error", std::string()) == expected);
    CHECK(child["listed_on"].empty());  // no context, no memory: nvidia-smi lists the child nowhere
    CHECK(results[step]["child_exit"] == 0);
  }
  if (profile.torch_major < 2)
    CHECK(expected == "CUDA error: initialization error\nCUDA kernel errors might be asynchronously reported at some "
                      "other API call,so the stacktrace below might be incorrect.\nFor debugging consider passing "
                      "CUDA_LAUNCH_BLOCKING=1.");
  if (profile.torch_at_least(2, 13))
    CHECK(expected == "CUDA error: initialization error\nSearch for `cudaErrorInitializationError' in "
                      "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information.");
  // PyTorch counted the GPUs once, in the parent: the child inherits the count.
  CHECK(results[4]["child"]["count"] == 8);
  // CUDA_VISIBLE_DEVICES set in the child changes nothing: CUDA read it in the parent, and fails here.
  CHECK(results[5]["child"].value("error", std::string()) == expected);

  // The parent goes on, and nvidia-smi still shows it, and it alone, after its children exit()ed.
  CHECK(results[6]["physical"] == 2);
  for (const int gpu : {1, 2}) CHECK(pids_on(results[7], gpu) == parent_only);
  for (const int gpu : {0, 3, 4, 5, 6, 7}) CHECK(pids_on(results[7], gpu).empty());
}

TEST_CASE("a child forked before CUDA started is a CUDA process of its own, and its parent can start CUDA after",
          "[sim][fork]") {
  const auto results = probe({{"CUDA_VISIBLE_DEVICES", "4,5,6,7"}},
                             {"fork:ones:cuda:1", "fork:setenv:CUDA_VISIBLE_DEVICES=6+ones:cuda:0", "smi", "ones:cuda:0", "smi"});
  INFO(results.dump(2));
  const auto& child = results[0]["child"];
  CHECK(child["physical"] == 5);
  CHECK(child["listed_on"] == nlohmann::json::array({5}));  // its own pid, on its own GPU
  CHECK(results[1]["child"]["physical"] == 6);  // its own CUDA_VISIBLE_DEVICES, read when its CUDA started
  const int parent = results[2]["pid"];
  CHECK(results[0]["child_pid"] != parent);
  for (int gpu = 0; gpu < 8; ++gpu) CHECK(pids_on(results[2], gpu).empty());  // the child left at exit
  CHECK(results[3]["physical"] == 4);
  CHECK(pids_on(results[4], 4) == std::vector<int>{parent});
}
