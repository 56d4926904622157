// For test programs whose tests call CUDA in their own process: every test there sees the
// default node with every GPU visible and a node state of its own, because the simulated
// driver reads this environment once, at the first CUDA call. A test program registers it
// in one of its files (Catch2 needs CATCH_CONFIG_EXTERNAL_INTERFACES before catch.hpp, which
// gpulab_test_headers defines for every test program):
//
//   CATCH_REGISTER_LISTENER(gpulab::test::InProcessEnvironment)
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "lesson_run.h"

namespace gpulab::test {

struct InProcessEnvironment : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;

  void testRunStarting(const Catch::TestRunInfo& info) override {
    TestEventListenerBase::testRunStarting(info);
    for (const char* name : {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "GPULAB_NODE", "GPULAB_NODES_DIR"})
      unsetenv(name);
    state_dir_ = fresh_state_dir();
    setenv("GPULAB_STATE_DIR", state_dir_.c_str(), /*overwrite=*/1);
  }
  void testRunEnded(const Catch::TestRunStats& stats) override {
    TestEventListenerBase::testRunEnded(stats);
    std::error_code ignored;
    std::filesystem::remove_all(state_dir_, ignored);
  }

 private:
  std::string state_dir_;
};

}  // namespace gpulab::test
