// Benchmark: all-reduce of a 10 M-parameter gradient across the ranks of `gpulab launch`
// (4 in `./gpulab bench`), on simulated GPU tensors through gpulab::distributed, against the
// same all-reduce of CPU tensors with plain Gloo, in the same run and process group. The
// simulated tensor is host memory: Gloo runs on a zero-copy CPU view of it, so the ratio
// measures what the simulation adds (target: <= 1.2x). Rank 0 prints the figures.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "gpulab/cuda.h"
#include "gpulab/distributed.h"

namespace {

constexpr std::int64_t kParameters = 10'000'000;
constexpr int kWarmup = 2;
constexpr int kReps = 5;
constexpr int kRounds = 3;  // alternate the two, keep each one's best round

double best_ms(gpulab::distributed::ProcessGroup& group, at::Tensor& tensor) {
  for (int i = 0; i < kWarmup; ++i) group.all_reduce(tensor);
  group.barrier();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kReps; ++i) group.all_reduce(tensor);
  group.barrier();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / kReps;
}

}  // namespace

int main() {
  try {
    const auto world = gpulab::distributed::World::from_environment();
    gpulab::cuda::set_device(world.local_rank);
    gpulab::distributed::ProcessGroup group(world);
    auto on_gpu = torch::ones({kParameters}, torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(world.local_rank)));
    auto on_cpu = torch::ones({kParameters});
    double gpu_ms = 1e300, cpu_ms = 1e300;
    for (int round = 0; round < kRounds; ++round) {
      gpu_ms = std::min(gpu_ms, best_ms(group, on_gpu));
      cpu_ms = std::min(cpu_ms, best_ms(group, on_cpu));
    }
    if (world.rank == 0)
      std::printf("all-reduce of %lld floats over %d ranks (%s): simulated GPU %.1f ms, plain Gloo on CPU %.1f ms, ratio %.2fx\n",
                  static_cast<long long>(kParameters), world.world_size, group.backend().c_str(), gpu_ms, cpu_ms,
                  gpu_ms / cpu_ms);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_all_reduce: %s\n", e.what());
    return 1;
  }
}
