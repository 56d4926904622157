// NVIDIA_VISIBLE_DEVICES (a container's GPUs) and CUDA_VISIBLE_DEVICES inside it, against real
// node files (src/model/container.cpp, docs/reference.md "Containers and schedulers"):
//   * the value is either refused with a ContainerError that names the variable, or read;
//   * a container's GPUs are host GPUs, each once, in PCI (ascending) order, each with MIG
//     instances of its own; no container (Host) has none listed, void/none have no GPU;
//   * the container's node has exactly those GPUs, each with its host UUID and bus id;
//   * CUDA inside shows host GPUs the container has, each at most once, and exactly what
//     CUDA_VISIBLE_DEVICES shows on the container's node, mapped back to the host.
// Input: byte 0 picks the node, whether CUDA_VISIBLE_DEVICES is set and to what (byte 1),
// and the order; the remaining bytes are NVIDIA_VISIBLE_DEVICES.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "model/container.h"
#include "model/node.h"

namespace {

const std::vector<gpulab::Node>& nodes() {
  static const std::vector<gpulab::Node> loaded = [] {
    std::vector<gpulab::Node> list;
    for (const char* name : {"dgx-a100", "workstation-mixed", "mig-a100", "aws-p4d", "pascal-rig"})
      list.push_back(gpulab::load_node_file(std::string(GPULAB_TEST_SOURCE_DIR) + "/nodes/" + name + ".json"));
    return list;
  }();
  return loaded;
}

// CUDA_VISIBLE_DEVICES inside the container: unset or a short list.
const char* const kInside[] = {nullptr, "0", "1", "1,0", "0,5", "", "GPU-", "2,1,0"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const unsigned selector = data[0];
  const gpulab::Node& host = nodes()[selector % nodes().size()];
  const char* inside = kInside[(selector / 8) % 8];
  const auto order = (selector & 0x40U) != 0 ? gpulab::DeviceOrder::PciBusId : gpulab::DeviceOrder::FastestFirst;
  const bool unset = (selector & 0x80U) != 0 && size == 1;
  const std::optional<std::string> value =
      unset ? std::nullopt : std::optional<std::string>(std::string(reinterpret_cast<const char*>(data) + 1, size - 1));

  gpulab::ContainerView view;
  try {
    view = gpulab::container_view(host, value);
  } catch (const gpulab::ContainerError& e) {
    if (std::string(e.what()).rfind("NVIDIA_VISIBLE_DEVICES=", 0) != 0) std::abort();
    return 0;
  }
  if (view.host_gpus.size() != view.mig_instances.size()) std::abort();
  if (!std::is_sorted(view.host_gpus.begin(), view.host_gpus.end())) std::abort();
  if (std::adjacent_find(view.host_gpus.begin(), view.host_gpus.end()) != view.host_gpus.end()) std::abort();
  const bool no_gpu = view.kind == gpulab::ContainerView::Kind::Host || view.kind == gpulab::ContainerView::Kind::None ||
                      view.kind == gpulab::ContainerView::Kind::Void;
  if (no_gpu && !view.host_gpus.empty()) std::abort();
  for (std::size_t i = 0; i < view.host_gpus.size(); ++i) {
    const int g = view.host_gpus[i];
    if (g < 0 || g >= static_cast<int>(host.gpus.size())) std::abort();
    for (const int m : view.mig_instances[i])
      if (m < 0 || m >= static_cast<int>(host.gpus[static_cast<std::size_t>(g)].mig.size())) std::abort();
  }
  const gpulab::Node node = gpulab::container_node(host, view);
  if (view.in_container()) {
    if (node.gpus.size() != view.host_gpus.size()) std::abort();
    for (std::size_t i = 0; i < node.gpus.size(); ++i)
      if (node.gpus[i].uuid != host.gpus[static_cast<std::size_t>(view.host_gpus[i])].uuid) std::abort();
  }
  const std::optional<std::string> cvd = inside == nullptr ? std::nullopt : std::optional<std::string>(inside);
  const auto devices = gpulab::visible_devices(host, view, cvd, order);
  const auto in_container = gpulab::visible_devices(node, cvd, order);
  if (devices.size() != in_container.size()) std::abort();
  for (std::size_t i = 0; i < devices.size(); ++i) {
    if (view.in_container() && view.container_index(devices[i].physical_index) != in_container[i].physical_index) std::abort();
    for (std::size_t j = 0; j < i; ++j)
      if (devices[j].physical_index == devices[i].physical_index && devices[j].mig_index == devices[i].mig_index)
        std::abort();
  }
  (void)gpulab::explain_visibility(host, view, cvd, order);
  return 0;
}
