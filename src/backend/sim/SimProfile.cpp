// The software profile on the simulated node: the linked LibTorch's version, and the CUDA
// runtime its official builds shipped with unless GPULAB_CUDA_RUNTIME overrides it.
#include "backend/sim/runtime/driver.h"
#include "backend/linked_torch.h"
#include "backend/backend.h"

namespace gpulab {
namespace {
// The driver models the linked release; tell it before anything can create it.
const bool g_version_known = [] {
  const Profile linked = linked_torch_version();
  sim::Driver::set_torch_version(linked.torch_major, linked.torch_minor, linked.torch_patch);
  return true;
}();
}  // namespace

Profile active_profile() {
  (void)g_version_known;
  return sim::Driver::current_profile();
}

bool cuda_not_started() { return !sim::Driver::initialized(); }

int current_device_if_started() { return sim::Driver::initialized() ? sim::Driver::current_device() : -1; }

}  // namespace gpulab
