// A simulated GPU node: the physical GPUs a machine has, as nvidia-smi lists them.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gpulab {

/// One MIG compute instance carved out of a physical GPU.
struct MigInstance {
  std::string uuid;            ///< "MIG-xxxxxxxx-…", as `nvidia-smi -L` prints it
  int gpu_instance = 0;        ///< GI id
  int compute_instance = 0;    ///< CI id
  std::uint64_t total_bytes = 0;     ///< its memory slice, as nvidia-smi shows it
  std::uint64_t capacity_bytes = 0;  ///< what cudaMemGetInfo reports as its total
  int sm_count = 0;            ///< its share of the GPU's multiprocessors
};

/// One physical GPU. Its physical index is its position in Node::gpus, which is PCI bus
/// order: the numbering nvidia-smi and NVML use.
struct Gpu {
  std::string name;            ///< "NVIDIA A100-SXM4-80GB"
  std::string uuid;            ///< "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
  std::string pci_bus_id;      ///< NVML form: "00000000:07:00.0"
  std::uint64_t total_bytes = 0;     ///< nvidia-smi's total memory
  /// cudaMemGetInfo's total, a little below nvidia-smi's (the driver keeps some): what
  /// allocations fit in and what PyTorch's out-of-memory text calls "total capacity".
  std::uint64_t capacity_bytes = 0;
  int cc_major = 0;            ///< compute capability, major (8 for an A100)
  int cc_minor = 0;            ///< compute capability, minor
  int sm_count = 0;            ///< multiprocessors; FASTEST_FIRST's tie-breaker
  std::uint64_t context_bytes = 0;  ///< what one process's CUDA context costs on this GPU
  bool mig_mode = false;            ///< MIG enabled: CUDA never shows it as a whole GPU
  std::vector<MigInstance> mig;     ///< its MIG compute instances (none in MIG mode is possible)
};

/// A simulated machine, read from a node file (docs/nodes.md).
struct Node {
  std::string name;            ///< "dgx-a100": what GPULAB_NODE selects
  std::string description;     ///< one line for `gpulab nodes`
  std::string source;          ///< the file it was read from
  std::vector<Gpu> gpus;       ///< in PCI bus order
  /// CUDA's FASTEST_FIRST enumeration observed on this machine (physical indices), when
  /// the node file states it; empty: derived by enumeration_order()'s heuristic.
  std::vector<int> cuda_order;
};

/// A node file that cannot be used. what() names the file and the field.
class NodeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Most GPUs a node may have (the shared state file has a fixed layout).
constexpr int kMaxGpus = 64;

/// cudaMemGetInfo's total for a GPU or MIG slice whose node file does not state it:
/// nvidia-smi's figure less 1% (measured: 0.6–1.7%), rounded down to 2 MiB.
std::uint64_t derived_capacity_bytes(std::uint64_t total_bytes);

/// Reads and validates a node file.
Node load_node_file(const std::string& path);

/// What `gpulab nodes` shows: a line per node GPULAB_NODE=<name> can pick, those in
/// `custom_dir` (GPULAB_NODES_DIR; "" none) first, a name there hiding a shipped node of
/// its name as resolve_node_path looks, then those in `shipped_dir` (nodes/); by name, a
/// broken file said to be so. `problem` tells when `custom_dir` cannot be read.
std::string nodes_listing(const std::string& custom_dir, const std::string& shipped_dir, std::string& problem);

/// Validates the text of a node file; `source` names it in errors and in Node::source.
Node parse_node_file(std::string_view text, const std::string& source);

/// Where a node spec points: a path (contains '/' or ends in ".json") or a name looked up
/// in GPULAB_NODES_DIR and then in the built-in nodes folder.
std::string resolve_node_path(const std::string& spec);

/// The node the current process simulates: GPULAB_NODE, or the default node.
Node load_selected_node();

/// Name of the node used when GPULAB_NODE is unset.
constexpr const char* kDefaultNodeName = "dgx-a100";

}  // namespace gpulab
