// Python's replicate (torch/nn/parallel/replicate.py): a copy of the module per device
// whose parameters' gradients flow back into the module's own parameters.
//
// Python's replicas are shallow copies whose parameters are Broadcast outputs; the one on
// device_ids[0] aliases the module's storage. LibTorch modules keep their parameters in
// member handles as well as in parameters_, so a replica must be a clone() with its own
// tensors (see torch/nn/parallel/data_parallel.h, "Replicating Modules"). Here the first
// replica is the module itself (same storage, gradients accumulate directly), and each
// clone's parameters get a gradient edge to a node that sums the clones' gradients onto
// the module's device, as Python's ReduceAddCoalesced does.
#include <ATen/core/Generator.h>
#include <ATen/CPUGeneratorImpl.h>
#include <c10/util/Exception.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>

#include <memory>
#include <mutex>
#include <utility>

#include <c10/util/intrusive_ptr.h>

#include "gpulab/data_parallel.h"

namespace gpulab::parallel {
namespace {

using torch::autograd::variable_list;

/// The backward of broadcasting one parameter: sums its copies' gradients on the
/// parameter's device and passes the sum to the parameter's gradient edge.
struct ReduceAddToSource final : public torch::autograd::Node {
  explicit ReduceAddToSource(c10::Device destination) : destination_(destination) {}
  std::string name() const override { return "gpulab::ReduceAddToSource"; }

  variable_list apply(variable_list&& grads) override {
    at::Tensor sum;
    for (const at::Tensor& grad : grads) {
      if (!grad.defined()) continue;  // that replica did not use the parameter
      const at::Tensor moved = grad.to(destination_);
      sum = sum.defined() ? sum + moved : moved;
    }
    return {sum};
  }

 private:
  c10::Device destination_;
};

/// Makes an autograd node the way the linked LibTorch holds them: std::shared_ptr up to
/// the 2.x releases that moved the graph to c10::intrusive_ptr (Edge::function says which).
template <typename Pointer>
struct NodeMaker;
template <typename Base>
struct NodeMaker<std::shared_ptr<Base>> {
  template <typename T, typename... Args>
  static std::shared_ptr<T> make(Args&&... args) { return std::make_shared<T>(std::forward<Args>(args)...); }
};
template <typename Base>
struct NodeMaker<c10::intrusive_ptr<Base>> {
  template <typename T, typename... Args>
  static c10::intrusive_ptr<T> make(Args&&... args) { return c10::make_intrusive<T>(std::forward<Args>(args)...); }
};
using NodePointer = decltype(torch::autograd::Edge::function);

/// Gives each copy's tensor `name` a gradient edge into `original` (or none, when the
/// original does not require a gradient).
void link(const at::Tensor& original, std::vector<at::Tensor> copies) {
  if (!original.requires_grad()) {
    for (at::Tensor& copy : copies)
      if (copy.is_leaf()) copy.requires_grad_(false);
    return;
  }
  const auto node = NodeMaker<NodePointer>::make<ReduceAddToSource>(original.device());
  node->set_next_edges(torch::autograd::collect_next_edges(original));
  for (at::Tensor& copy : copies) torch::autograd::set_history(copy, node);
}

void link_gradients(const torch::nn::Module& original, const std::vector<std::shared_ptr<torch::nn::Module>>& copies) {
  for (const auto& parameter : original.named_parameters(/*recurse=*/false)) {
    std::vector<at::Tensor> handles;
    for (const auto& copy : copies) handles.push_back(copy->named_parameters(/*recurse=*/false)[parameter.key()]);
    link(parameter.value(), std::move(handles));
  }
  for (const auto& buffer : original.named_buffers(/*recurse=*/false)) {
    std::vector<at::Tensor> handles;
    for (const auto& copy : copies) handles.push_back(copy->named_buffers(/*recurse=*/false)[buffer.key()]);
    link(buffer.value(), std::move(handles));
  }
  for (const auto& child : original.named_children()) {
    std::vector<std::shared_ptr<torch::nn::Module>> child_copies;
    for (const auto& copy : copies) child_copies.push_back(copy->named_children()[child.key()]);
    link_gradients(*child.value(), child_copies);
  }
}

/// clone() re-runs the module's reset(), which draws initial values from the CPU generator:
/// restore it, so that replicating leaves the program's random stream as it was.
class KeepCpuRandomState {
 public:
  KeepCpuRandomState() : generator_(at::detail::getDefaultCPUGenerator()) {
    const std::lock_guard<std::mutex> lock(generator_.mutex());
    state_ = generator_.get_state();
  }
  ~KeepCpuRandomState() {
    const std::lock_guard<std::mutex> lock(generator_.mutex());
    generator_.set_state(state_);
  }
  KeepCpuRandomState(const KeepCpuRandomState&) = delete;
  KeepCpuRandomState& operator=(const KeepCpuRandomState&) = delete;

 private:
  at::Generator generator_;
  at::Tensor state_;
};

}  // namespace

std::vector<std::shared_ptr<torch::nn::Module>> replicate_modules(const std::shared_ptr<torch::nn::Module>& module,
                                                                  const std::vector<int>& devices) {
  TORCH_CHECK(!devices.empty(), "replicate: no devices");
  std::vector<std::shared_ptr<torch::nn::Module>> replicas{module};
  std::vector<std::shared_ptr<torch::nn::Module>> copies;
  {
    const KeepCpuRandomState keep;
    for (std::size_t i = 1; i < devices.size(); ++i)
      copies.push_back(module->clone(c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(devices[i]))));
  }
  link_gradients(*module, copies);
  replicas.insert(replicas.end(), copies.begin(), copies.end());
  return replicas;
}

}  // namespace gpulab::parallel
