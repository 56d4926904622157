// The lesson API's helpers (include/gpulab/): what lessons use instead of parsing and
// synchronising by hand.
#include <atomic>
#include <set>
#include <stdexcept>
#include <thread>

#include <catch2/catch.hpp>

#include <torch/torch.h>

#include "gpulab/cuda.h"
#include "gpulab/lesson.h"
#include "gpulab/processes.h"
#include "gpulab/threads.h"

TEST_CASE("split gives the entries as written: none for an empty text, empty ones kept", "[lesson-api]") {
  using V = std::vector<std::string>;
  CHECK(gpulab::split("2,1") == V{"2", "1"});
  CHECK(gpulab::split("").empty());
  CHECK(gpulab::split("1,,2") == V{"1", "", "2"});
  CHECK(gpulab::split("GPU-a") == V{"GPU-a"});
  CHECK(gpulab::split("0,2,-1,1").size() == 4);
  CHECK(gpulab::split("a:b", ':') == V{"a", "b"});
}

TEST_CASE("PCI addresses compare as numbers, whatever the domain's width or the case", "[lesson-api]") {
  const auto smi = gpulab::cuda::parse_pci_address("00000000:3D:00.0");
  const auto runtime = gpulab::cuda::parse_pci_address("0000:3d:00.0");
  REQUIRE(smi);
  REQUIRE(runtime);
  CHECK(*smi == *runtime);
  CHECK(smi->bus == 0x3d);  // hexadecimal: 61, not 3 or 30
  CHECK(*gpulab::cuda::parse_pci_address("00000000:41:00.0") != *smi);
  CHECK_FALSE(gpulab::cuda::parse_pci_address("GPU-65bd580d"));
  CHECK_FALSE(gpulab::cuda::parse_pci_address(""));
  gpulab::cuda::DeviceProperties properties;
  properties.pci_bus_id = 0x3d;
  CHECK(gpulab::cuda::pci_address_of(properties) == *smi);
}

TEST_CASE("MidStep holds every worker until the main thread has looked, and a worker that never arrives does not block", "[lesson-api]") {
  gpulab::MidStep mid_step(3);
  std::atomic<int> finished{0};
  std::vector<std::thread> workers;
  for (std::size_t w = 0; w < 3; ++w)
    workers.emplace_back([&, w] {
      if (w != 1) mid_step.arrive(w, torch::full({1}, static_cast<double>(w)));
      ++finished;  // after arrive: only once the main thread has looked
      mid_step.done(w);
    });
  std::vector<std::string> seen;
  int finished_when_seen = -1;
  mid_step.look([&](const std::vector<gpulab::NamedTensor>& weights) {
    for (const auto& [name, tensor] : weights) seen.push_back(name);
    finished_when_seen = finished.load();
  });
  for (auto& worker : workers) worker.join();
  std::sort(seen.begin(), seen.end());
  CHECK(seen == std::vector<std::string>{"worker 0", "worker 2"});
  CHECK(finished_when_seen <= 1);  // only worker 1, which never arrived, can have finished
  CHECK(finished == 3);
}

TEST_CASE("WorkerPool forks workers and brings back each one's facts, error and GPUs, whatever text they hold",
          "[lesson-api][fork]") {
  char name[] = "lesson_api_test";
  char json[] = "--json";  // the report is printed at finish(), which this test never calls
  char* argv[] = {name, json, nullptr};
  gpulab::Lesson lesson("worker-pool", 2, argv);
  (void)torch::ones({1}, torch::Device(torch::kCUDA, 0));  // CUDA starts here, before the forks
  gpulab::WorkerPool pool(lesson);
  pool.fork([](gpulab::Worker& worker) {
    worker.fact("text", "a\tb\nc\\d\\n");
    worker.fact("number", 7);
  });
  pool.fork([](gpulab::Worker&) { throw std::runtime_error("line one\nline two"); });
  pool.fork([](gpulab::Worker&) { _exit(3); });
  pool.fork([](gpulab::Worker&) { (void)torch::ones({1}, torch::Device(torch::kCUDA, 1)); });
  CHECK(pool.size() == 4);
  const auto reports = pool.join();
  REQUIRE(reports.size() == 4);
  CHECK(reports[0].finished);
  CHECK(reports[0].error.empty());
  CHECK(reports[0].gpus.empty());  // no CUDA work: nvidia-smi lists it nowhere
  using Facts = std::vector<std::pair<std::string, std::string>>;
  CHECK(reports[0].facts == Facts{{"text", "a\tb\nc\\d\\n"}, {"number", "7"}});
  CHECK_FALSE(reports[1].finished);
  CHECK(reports[1].error == "line one\nline two");
  CHECK_FALSE(reports[2].finished);
  CHECK(reports[2].error.rfind("the worker process ended without reporting", 0) == 0);
  // Forked after CUDA started in this process: CUDA's initialization error.
  CHECK_FALSE(reports[3].finished);
  CHECK(reports[3].error.rfind("CUDA error: initialization error", 0) == 0);
  CHECK(reports[3].gpus.empty());
  std::set<int> pids;
  for (const auto& report : reports) pids.insert(report.pid);
  CHECK(pids.size() == 4);
  CHECK(pids.count(static_cast<int>(getpid())) == 0);
  CHECK(pool.join().empty());  // every worker joined once
}
