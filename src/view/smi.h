// What `gpulab smi` prints, rendered to strings: nvidia-smi's table (or its JSON document)
// and a frame of the live view, `gpulab smi --watch` (docs/node-picture.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpulab/observe.h"
#include "model/container.h"
#include "model/profile.h"
#include "state/host_states.h"
#include "view/node_picture.h"

namespace gpulab::view {

/// Whose GPUs these are: the node (or host name on real GPUs), the backend and the profile.
struct SmiSource {
  std::string node;
  Backend backend = Backend::kSim;
  Profile profile;
  /// Inside a container: NVIDIA_VISIBLE_DEVICES, and the GPUs are the container's.
  std::optional<std::string> container;
};

/// What nvidia-smi inside the container shows of the host's GPUs: only the container's,
/// numbered from 0 in PCI order, with every process's memory in the totals but no process
/// rows (the driver reports host PIDs, which the container's PID namespace lacks:
/// NVIDIA/nvidia-docker#179, #1460, #1483).
std::vector<GpuView> container_smi_view(const ContainerView& view, const std::vector<GpuView>& host_gpus);

/// In a simulated container (`container`), what nvidia-smi in it shows: the container's
/// GPUs, `source` saying so; unchanged outside one. Throws std::runtime_error in a
/// container without a driver (not a GPU container: no nvidia-smi there).
void enter_container(const ContainerView& container, SmiSource& source, std::vector<GpuView>& gpus);

/// `gpulab smi`: a header line, a row per physical GPU (memory used of total, and a bar),
/// then a row per process on each GPU.
std::string render_smi_table(const SmiSource& source, const std::vector<GpuView>& gpus);
/// `gpulab smi --json`: the same as one JSON document, with its newline.
std::string render_smi_json(const SmiSource& source, const std::vector<GpuView>& gpus);

/// The title of a watch frame.
struct WatchTitle {
  std::string node;
  Backend backend = Backend::kSim;
  std::string clock;        ///< "HH:MM:SS", when the frame was read
  double interval_s = 0.5;  ///< between refreshes
  bool interactive = false; ///< on a terminal: say that q quits
};

/// One frame of `gpulab smi --watch`: for each host its GPUs (idle ones folded on one line
/// when there are several hosts or more than 8 GPUs), then each process with its RANK and a
/// bar per GPU it uses. No line is wider than `style.width`.
std::string render_smi_watch_frame(const WatchTitle& title, const std::vector<HostView>& hosts, const PictureStyle& style);

}  // namespace gpulab::view
