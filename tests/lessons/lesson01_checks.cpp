// Lesson 01: nvidia-smi counts physical GPUs, CUDA counts visible ones; with none visible
// the program falls back to the CPU and says so (claims A1.2, A3.3).
#include <catch2/catch.hpp>

#include "expect.h"
#include "gpu_requirements.h"
#include "lesson_run.h"

using namespace gpulab::test;

TEST_CASE("on the default node every physical GPU is visible and the tensor lands on GPU 0", "[lesson01]") {
  const Env env = {};
  GPULAB_REQUIRE_GPUS(1, env);  // every GPU there is: the node's on the simulator
  const auto run = run_lesson("01", env);
  const auto gpus = static_cast<std::int64_t>(physical_gpus(env));
  expect_equal("the GPUs nvidia-smi counts (physical_gpus)", run.fact("physical_gpus"), gpus);
  expect_equal("torch::cuda::device_count()", run.fact("visible_devices"), gpus);
  const int first = cuda_order(env).front();  // physical GPU 0 where the GPUs are alike
  expect_on_gpu(run, "after creating a tensor", "x", first);
  expect_contexts(run, "after creating a tensor", {first});
}

TEST_CASE("the counts follow the node file, not a fixed 8", "[lesson01]") {
  const Env env = {{"GPULAB_NODE", "tiny2"}};  // real GPUs ignore it: the machine's count
  GPULAB_REQUIRE_GPUS(1, Env{});  // a GPU, on any node (asking once per test program is enough)
  const auto run = run_lesson("01", env);
  const auto gpus = static_cast<std::int64_t>(physical_gpus(env));
  expect_equal("the GPUs nvidia-smi counts (physical_gpus)", run.fact("physical_gpus"), gpus);
  expect_equal("torch::cuda::device_count()", run.fact("visible_devices"), gpus);
}

TEST_CASE("CUDA_VISIBLE_DEVICES changes what CUDA sees, not what nvidia-smi counts", "[lesson01]") {
  const Env env = {{"CUDA_VISIBLE_DEVICES", "6,7"}};
  GPULAB_REQUIRE_GPUS(gpus_needed(env), env);
  const auto run = run_lesson("01", env);
  expect_equal("the GPUs nvidia-smi counts (physical_gpus)", run.fact("physical_gpus"),
               static_cast<std::int64_t>(physical_gpus()));
  expect_equal("torch::cuda::device_count()", run.fact("visible_devices"), 2);
  expect_on_gpu(run, "after creating a tensor", "x", cuda_order().at(6));
}

TEST_CASE("with CUDA_VISIBLE_DEVICES empty no GPU is visible and the program runs on the CPU, saying why",
          "[lesson01]") {
  const Env env = {{"CUDA_VISIBLE_DEVICES", ""}};
  GPULAB_REQUIRE_GPUS(gpus_needed(env), env);
  const auto run = run_lesson("01", env);
  const auto uncaught = run.errors("uncaught");
  expect_that(run.process.exit_code == 0 && uncaught.empty(), "the program runs to its end, on the CPU",
              "it stopped with an error: " + (uncaught.empty() ? run.process.err : uncaught.front()));
  expect_equal("the GPUs nvidia-smi counts (physical_gpus)", run.fact("physical_gpus"),
               static_cast<std::int64_t>(physical_gpus()));
  expect_equal("torch::cuda::device_count()", run.fact("visible_devices"), 0);
  expect_on_gpu(run, "after creating a tensor", "x", -1);
  expect_memory_on(run, "after creating a tensor", {});
  // The explanation goes to stderr next to the JSON report: it must name the fallback.
  expect_that(Catch::Matchers::Contains("CPU", Catch::CaseSensitive::No).match(run.process.err), "a message that the program falls back to the CPU",
              run.process.err.empty() ? "no message" : "the output \"" + run.process.err + "\"");
}
