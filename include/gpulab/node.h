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
  std::uint64_t total_bytes = 0;
  int sm_count = 0;
};

/// One physical GPU. Its physical index is its position in Node::gpus, which is PCI bus
/// order: the numbering nvidia-smi and NVML use.
struct Gpu {
  std::string name;
  std::string uuid;            ///< "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
  std::string pci_bus_id;      ///< NVML form: "00000000:07:00.0"
  std::uint64_t total_bytes = 0;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  std::uint64_t context_bytes = 0;  ///< what one process's CUDA context costs on this GPU
  std::vector<MigInstance> mig;     ///< empty unless the GPU is in MIG mode
};

struct Node {
  std::string name;
  std::string description;
  std::string source;          ///< the file it was read from
  std::vector<Gpu> gpus;       ///< in PCI bus order
};

/// A node file that cannot be used. what() names the file and the field.
class NodeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Most GPUs a node may have (the shared state file has a fixed layout).
constexpr int kMaxGpus = 64;

/// Reads and validates a node file.
Node load_node_file(const std::string& path);

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
