// The facts a picture draws (internal to view/): the node the report ran on, read from its
// node file once per report, and the mapping CUDA_VISIBLE_DEVICES -> CUDA index -> physical
// GPU under the variables the report recorded, with the visibility rules CUDA applies
// (model/visibility.h). What the process used and where its tensors were stay the report's
// observed facts, never derived. Split from node_picture.cpp: every part of a picture takes
// a ReportFacts built once at the entry, so no part reads a node file again.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/container.h"
#include "model/node.h"
#include "model/visibility.h"
#include "report/report_reader.h"

namespace gpulab::view::picture {

/// CUDA_VISIBLE_DEVICES -> CUDA index -> physical GPU, under the variables the report recorded.
struct Mapping {
  std::optional<std::string> visible;  ///< CUDA_VISIBLE_DEVICES (nullopt: unset)
  std::optional<std::string> order_variable;
  DeviceOrder order = DeviceOrder::FastestFirst;
  std::optional<ReportEnvironment> start;  ///< the variables at start, when these are the ones at exit
  bool changed = false;
  std::vector<int> physical;  ///< per CUDA index; -1 when not known
  std::vector<int> mig;       ///< per CUDA index: MIG instance or -1
  struct Entry {
    std::string text;
    int cuda = -1;  ///< the CUDA index it became, -1 when CUDA dropped it
  };
  std::vector<Entry> entries;
  std::optional<std::string> note;
  bool derived = false;     ///< from the node file (else from the tensors only)
  ContainerView container;  ///< NVIDIA_VISIBLE_DEVICES: integer entries count in its GPUs
};

/// One report with its node (nullopt: no node file fits) and the mapping CUDA used: what
/// every part of a picture draws from, built once per report.
struct ReportFacts {
  const Report& report;  ///< the report itself, which must outlive the facts
  std::optional<Node> node;
  Mapping mapping;
};

/// The node file the report names (GPULAB_NODE first, then the report's node), read once;
/// on the simulator only a file of the report's node name counts.
std::optional<Node> node_of(const Report& report);
/// The report's node and mapping (reads the node file: once per report and picture).
ReportFacts facts_of(const Report& report);

/// "cuda:1" -> 1; nullopt for "cpu" or "cuda" without an index.
std::optional<int> cuda_index(const std::string& device);
/// Each named tensor where it was last seen, in the order first seen.
std::vector<TensorLocation> last_locations(const Report& report);

/// The mapping under `env` alone. `simulated`: the simulated node plays the container
/// runtime (NVIDIA_VISIBLE_DEVICES); on real GPUs the runtime already did.
Mapping map_devices(const std::optional<Node>& node, const ReportEnvironment& env, bool simulated);
/// The mapping CUDA used: the variables at start, or those at exit when the program changed
/// them (setenv before CUDA started) and only they explain what was observed.
Mapping mapping_of(const std::optional<Node>& node, const Report& report);

}  // namespace gpulab::view::picture
