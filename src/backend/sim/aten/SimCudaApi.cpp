// gpulab::cuda on the simulated node.
#include "SimErrors.h"
#include "gpulab/cuda.h"

namespace gpulab::cuda {
namespace {
int resolve(int index) { return index < 0 ? sim::current_device() : index; }
}  // namespace

// torch.cuda.set_device as the profile's PyTorch has it (see Driver::set_device).
void set_device(int index) { sim::check(sim::driver().set_device(index)); }

int current_device() {
  sim::driver();  // like torch.cuda.current_device(), this initialises CUDA
  return sim::current_device();
}

std::uint64_t memory_allocated(int index) {
  sim::Driver& d = sim::driver();
  sim::check(d.check_device(resolve(index)));
  return d.stats(resolve(index)).allocated_bytes;
}

std::uint64_t memory_reserved(int index) {
  sim::Driver& d = sim::driver();
  sim::check(d.check_device(resolve(index)));
  return d.stats(resolve(index)).reserved_bytes;
}

void empty_cache() { sim::driver().empty_cache(); }

}  // namespace gpulab::cuda
