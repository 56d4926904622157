// The simulated node's observer: reads the node state shared by every process, like
// nvidia-smi reads the driver's. Torch-free: the command line links it without LibTorch.
#include <unistd.h>

#include <memory>
#include <stdexcept>

#include "backend/sim/runtime/cuda_check_message.h"
#include "backend/sim/runtime/driver.h"
#include "state/node_state.h"
#include "gpulab/observe.h"

namespace gpulab {
namespace {

class SimObserver final : public Observer {
 public:
  // The node comes from the driver when CUDA is up (it froze the environment), else from
  // GPULAB_NODE: observing alone must not initialise CUDA.
  SimObserver() { follow_driver(); }

  Backend backend() const override { return Backend::kSim; }
  std::string node() const override { return node_.name; }

  std::vector<GpuView> gpus() override {
    follow_driver();
    std::vector<GpuView> views;
    for (std::size_t p = 0; p < node_.gpus.size(); ++p) {
      const Gpu& gpu = node_.gpus[p];
      GpuView view;
      view.physical_index = static_cast<int>(p);
      view.uuid = gpu.uuid;
      view.name = gpu.name;
      view.pci_bus_id = gpu.pci_bus_id;
      view.total_bytes = gpu.total_bytes;
      views.push_back(std::move(view));
    }
    const int self = getpid();
    for (const ProcessUsage& process : state_->processes()) {
      for (std::size_t p = 0; p < views.size(); ++p) {
        const std::uint64_t used = process.used_bytes[p];
        const bool context = (process.context_mask >> p) & 1u;
        if (used == 0 && !context) continue;
        views[p].used_bytes += used;
        ProcessOnGpu row{process.pid, process.name, used};
        if (const int instance = process.instance_on(static_cast<int>(p)); instance >= 0) {
          row.gpu_instance = node_.gpus[p].mig[static_cast<std::size_t>(instance)].gpu_instance;
          row.compute_instance = node_.gpus[p].mig[static_cast<std::size_t>(instance)].compute_instance;
        }
        views[p].processes.push_back(std::move(row));
        if (process.pid == self) {
          views[p].this_process_bytes = used;
          views[p].this_process_context = context;
        }
      }
    }
    return views;
  }

  int cuda_device_count() override { return driver().device_count(); }

  int physical_index(int cuda_index) override {
    sim::Driver& driver = this->driver();
    if (const sim::Error error = driver.check_device(cuda_index); error != sim::Error::Success)
      throw std::runtime_error(sim::cuda_error_message(error));
    return driver.physical_index(cuda_index);
  }

 private:
  // The process's driver; a node or state problem says what to fix, as in a lesson program.
  static sim::Driver& driver() {
    try {
      return sim::Driver::get();
    } catch (const std::exception& e) {
      throw std::runtime_error(std::string("the simulated node: ") + e.what());  // the CLI adds "gpulab: "
    }
  }

  // An observer made before CUDA initialised read GPULAB_NODE and GPULAB_STATE_DIR then;
  // once the driver exists, its node and state are the ones this process uses (a program
  // may change the variables between the two), so the observer switches to them.
  void follow_driver() {
    const bool driver = sim::Driver::initialized();
    if (state_ != nullptr && !(driver && sim::Driver::get().state().path() != state_->path())) return;
    node_ = driver ? sim::Driver::get().node() : load_selected_node();
    state_ = std::make_unique<NodeState>(node_, driver ? sim::Driver::get().state().path() : std::string());
  }

  Node node_;
  std::unique_ptr<NodeState> state_;
};

}  // namespace

std::unique_ptr<Observer> make_observer() { return std::make_unique<SimObserver>(); }

}  // namespace gpulab
