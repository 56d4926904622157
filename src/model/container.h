// A container's view of the node: what NVIDIA's container runtime hands a container through
// NVIDIA_VISIBLE_DEVICES, and what CUDA then shows inside it.
//
// Rules (docs/reference.md, "Containers and schedulers"): NVIDIA Container Toolkit reads the
// variable (internal/config/image: entries trimmed, empty ones dropped; unset, empty or any
// "void" entry: not a GPU container; "all" or "none" wins where it comes first), and
// libnvidia-container selects the devices (src/cli/common.c select_devices: "all", a full
// GPU- UUID, a PCI bus id, an NVML index, a full MIG- UUID or GPU:MIG; anything else fails
// the container's start with "device error: <entry>: unknown device"). Inside, NVML and CUDA
// see only the injected GPUs and number them from 0, nvidia-smi in PCI bus order.
// gpulab reads an unset variable as "not in a container": the host's view.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/node.h"
#include "model/visibility.h"

namespace gpulab {

/// The GPUs a container was given, as the host numbers them.
struct ContainerView {
  /// What NVIDIA_VISIBLE_DEVICES asked for.
  enum class Kind {
    Host,     ///< unset: no container, the process sees the host's GPUs
    All,      ///< "all": every GPU of the host
    Devices,  ///< a list of GPUs or MIG devices
    None,     ///< "none": the driver is injected, no GPU
    Void      ///< empty or "void": not a GPU container, neither driver nor GPU
  };
  Kind kind = Kind::Host;
  /// The host GPUs (physical indices) the container has, in PCI bus order: container GPU i
  /// is host GPU host_gpus[i].
  std::vector<int> host_gpus;
  /// For each of host_gpus, the MIG instances (indices into Gpu::mig) the container has.
  std::vector<std::vector<int>> mig_instances;
  /// The variable's value, nullopt when unset.
  std::optional<std::string> value;

  /// False for Kind::Host.
  bool in_container() const { return kind != Kind::Host; }
  /// False where the runtime injected no driver (Kind::Void).
  bool has_driver() const { return kind != Kind::Void; }
  /// The container's index of a host GPU, or -1 when the container does not have it.
  int container_index(int host_physical) const;
};

/// NVIDIA_VISIBLE_DEVICES names a device the host lacks: the runtime would refuse to start
/// the container. what() names the variable, the entry and what the host has.
class ContainerError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// Reads NVIDIA_VISIBLE_DEVICES (nullopt: unset) against the host node. Throws
/// ContainerError where nvidia-container-cli would fail the container's start.
ContainerView container_view(const Node& host, const std::optional<std::string>& nvidia_visible_devices);

/// The node a container sees: the host GPUs it has, renumbered from 0 in PCI order, each with
/// its real name, UUID and bus id, and only the MIG instances it was given. The host's
/// observed CUDA order, when stated, keeps its relative order.
Node container_node(const Node& host, const ContainerView& view);

/// The devices CUDA exposes inside the container (CUDA_VISIBLE_DEVICES counts in the
/// container's numbering), as host physical indices and host MIG indices. Kind::Host: the
/// same as visible_devices(host, ...).
std::vector<VisibleDevice> visible_devices(const Node& host, const ContainerView& view,
                                           const std::optional<std::string>& cuda_visible_devices, DeviceOrder order);

/// explain_visibility() inside the container (its numbering), plus why a container sees no
/// GPU ("none", "void").
std::optional<std::string> explain_visibility(const Node& host, const ContainerView& view,
                                              const std::optional<std::string>& cuda_visible_devices, DeviceOrder order);

/// The container view of this process's environment (NVIDIA_VISIBLE_DEVICES) on `host`.
ContainerView current_container_view(const Node& host);

}  // namespace gpulab
