#include <cstdlib>
#include <filesystem>

#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <catch2/catch.hpp>

#include "lesson_run.h"
#include "parallel_support.h"

namespace gpulab::test {
namespace {

// The tests that run in this process see the default node with every GPU visible, and a
// node state of their own; the driver reads this environment at the first CUDA call.
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

}  // namespace

CATCH_REGISTER_LISTENER(InProcessEnvironment)

}  // namespace gpulab::test
