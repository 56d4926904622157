// memory-churn INDEX STEPS SEED MAX_BYTES FINAL_BYTES: one of several processes using the
// same GPU at once. It talks over stdin/stdout so that a test can line the processes up:
//   1. prints "ready" (its context on cuda:INDEX exists) and waits for the line "go";
//   2. STEPS times: allocates a uint8 tensor of a random size up to MAX_BYTES on
//      cuda:INDEX (out-of-memory errors are counted, not fatal), keeps at most four such
//      tensors, drops a random one now and then and sometimes empties the cache. After
//      every step it reads the node as nvidia-smi does and counts a violation when the
//      GPU's total use exceeds its capacity or when this process's own row, minus its
//      memory_reserved(), is no longer what it was at the start (its context): both would
//      mean that processes updating the node state at the same time corrupted it;
//   3. frees everything, empties the cache, prints "finished" and waits for "final";
//   4. allocates FINAL_BYTES, prints one JSON line {pid, steps, ooms, violations,
//      allocated, reserved} and holds the tensor until stdin closes.
#include <torch/torch.h>
#include <unistd.h>

#include <cstdint>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpulab/cuda.h"
#include "gpulab/observe.h"

namespace {

bool wait_for(const std::string& word) {
  for (std::string line; std::getline(std::cin, line);)
    if (line == word) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::cerr << "usage: memory-churn INDEX STEPS SEED MAX_BYTES FINAL_BYTES\n";
    return 2;
  }
  const int index = std::stoi(argv[1]);
  const int steps = std::stoi(argv[2]);
  std::mt19937_64 random(std::stoull(argv[3]));
  std::uniform_int_distribution<std::int64_t> size(1, std::stoll(argv[4]));
  const std::int64_t final_bytes = std::stoll(argv[5]);
  const auto options = torch::TensorOptions().dtype(torch::kUInt8).device(torch::kCUDA, index);

  gpulab::cuda::set_device(index);
  torch::cuda::synchronize(index);  // work: the context, on every runtime, before anyone starts
  auto observer = gpulab::make_observer();
  const int physical = observer->physical_index(index);
  auto own_row_minus_reserved = [&] {
    const auto gpu = observer->gpus().at(static_cast<std::size_t>(physical));
    return static_cast<std::int64_t>(gpu.this_process_bytes) -
           static_cast<std::int64_t>(gpulab::cuda::memory_reserved(index));
  };
  const std::int64_t context = own_row_minus_reserved();
  std::cout << "ready" << std::endl;
  if (!wait_for("go")) return 1;

  std::vector<torch::Tensor> live;
  int ooms = 0;
  int violations = 0;
  for (int step = 0; step < steps; ++step) {
    try {
      live.push_back(torch::empty({size(random)}, options));
    } catch (const c10::OutOfMemoryError&) {
      ++ooms;
    }
    if (!live.empty() && (live.size() > 4 || random() % 3 == 0))
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(random() % live.size()));
    if (random() % 8 == 0) gpulab::cuda::empty_cache();

    const auto gpu = observer->gpus().at(static_cast<std::size_t>(physical));
    if (gpu.used_bytes > gpu.total_bytes) ++violations;
    if (own_row_minus_reserved() != context) ++violations;
  }
  live.clear();
  gpulab::cuda::empty_cache();
  std::cout << "finished" << std::endl;
  if (!wait_for("final")) return 1;

  const torch::Tensor held = torch::empty({final_bytes}, options);
  const nlohmann::json report = {{"pid", getpid()},
                                 {"steps", steps},
                                 {"ooms", ooms},
                                 {"violations", violations},
                                 {"allocated", gpulab::cuda::memory_allocated(index)},
                                 {"reserved", gpulab::cuda::memory_reserved(index)}};
  std::cout << report.dump() << std::endl;
  for (std::string line; std::getline(std::cin, line);) {  // until stdin closes
  }
  return 0;
}
