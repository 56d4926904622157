// Replicas only where a chunk went, the first sharing the module's storage; one thread per
// replica inside a guard for its device; exceptions re-raised with the replica's place.
#include <set>

#include <catch2/catch.hpp>

#include "gpulab/data_parallel.h"
#include "parallel_support.h"

using namespace gpulab::test;

TEST_CASE("replicate: the replica on device_ids[0] shares the module's storage, the others are copies on their devices",
          "[parallel][replicate]") {
  Recorder model;
  model->to(cuda(2));
  torch::manual_seed(7);
  const auto expected_next = torch::rand({4});
  torch::manual_seed(7);
  const auto replicas = gpulab::replicate(model.ptr(), {2, 5, 6});
  CHECK(torch::equal(torch::rand({4}), expected_next));  // clone()'s reset() left the random stream alone

  REQUIRE(replicas.size() == 3);
  const auto original = model->parameters();
  for (std::size_t r = 0; r < replicas.size(); ++r) {
    const auto copy = replicas[r]->parameters();
    REQUIRE(copy.size() == original.size());
    for (std::size_t p = 0; p < copy.size(); ++p) {
      CHECK(copy[p].device() == cuda(r == 0 ? 2 : (r == 1 ? 5 : 6)));
      CHECK(torch::equal(copy[p].cpu(), original[p].cpu()));
      if (r == 0) CHECK(copy[p].data_ptr() == original[p].data_ptr());
      if (r > 0) CHECK(copy[p].data_ptr() != original[p].data_ptr());
    }
  }
  CHECK(replicas[1]->log == model->log);  // clones copy the module's other members

  SECTION("the copies' gradients reach the module's parameters, summed on its device") {
    const auto input = torch::ones({1, 8});
    (replicas[1]->forward(input.to(cuda(5))).sum().to(cuda(2)) + replicas[2]->forward(input.to(cuda(6))).sum().to(cuda(2)))
        .backward();
    const auto weight = model->linear->weight;
    REQUIRE(weight.grad().defined());
    CHECK(weight.grad().device() == cuda(2));
    CHECK(torch::allclose(weight.grad().cpu(), torch::full({4, 8}, 2.0f)));
  }
}

TEST_CASE("forward runs one replica per chunk, each on its own thread with its device current", "[parallel][apply]") {
  Recorder model;
  model->to(cuda(1));
  gpulab::DataParallel parallel(model, {1, 4, 6, 7});
  const auto output = parallel.forward(torch::randn({5, 8}));  // 3 chunks of 2, 2, 1 rows
  CHECK(output.device() == cuda(1));
  CHECK(output.size(0) == 5);

  const auto& calls = model->log->calls;
  REQUIRE(calls.size() == 3);
  std::set<int> devices;
  std::set<std::thread::id> threads;
  for (const auto& call : calls) {
    CHECK(call.current_device == call.input_device.index());
    CHECK(call.thread != std::this_thread::get_id());
    CHECK(call.grad_enabled);
    devices.insert(call.current_device);
    threads.insert(call.thread);
  }
  CHECK(devices == std::set<int>{1, 4, 6});  // replicas only where a chunk went
  CHECK(threads.size() == 3);
  CHECK(gpulab::cuda::current_device() == 0);  // the caller's device is untouched

  SECTION("the caller's grad mode reaches the replicas") {
    model->log->calls.clear();
    const torch::NoGradGuard no_grad;
    CHECK_FALSE(parallel.forward(torch::randn({4, 8})).requires_grad());
    for (const auto& call : model->log->calls) CHECK_FALSE(call.grad_enabled);
  }
}

TEST_CASE("an exception in a replica is re-raised as 'Caught <type> in replica i on device d.'", "[parallel][apply]") {
  Recorder model(/*fail_on_device=*/6);
  model->to(cuda(3));
  gpulab::DataParallel parallel(model, {3, 6});
  try {
    parallel.forward(torch::randn({4, 8}));
    FAIL("no exception");
  } catch (const gpulab::ReplicaError& error) {
    const std::string message = error.what_without_backtrace();
    CHECK_THAT(message, Catch::StartsWith("Caught c10::ValueError in replica 1 on device 6.\n"));
    CHECK_THAT(message, Catch::Contains("this replica refuses device 6"));
    CHECK(error.replica() == 1);
    CHECK(error.device() == 6);
    CHECK_THROWS_AS(std::rethrow_exception(error.original()), c10::ValueError);
  }
}
