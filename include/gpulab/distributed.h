// Multi-process training with c10d, the engine under torch.distributed: the few calls a
// LibTorch program needs to train one model in several processes (one per GPU), started
// by `gpulab launch` or `torchrun --no-python`.
//
// The C++ frontend has no DistributedDataParallel (pytorch#48959): gradients are
// all-reduced by hand after backward(), as pytorch/examples' cpp/distributed does;
// Python's DDP does the same all-reduce, in buckets, during backward().
//
//   auto world = gpulab::distributed::World::from_environment();
//   gpulab::distributed::ProcessGroup group(world);
//   group.broadcast_parameters(*model);          // every rank starts from rank 0's weights
//   ... loss.backward(); group.all_reduce_gradients(*model); optimizer.step();
//
// Backends: Gloo on the simulated node (a simulated GPU tensor is host memory, so the
// collective runs on a zero-copy CPU view of it); on real GPUs NCCL when LibTorch has it,
// else Gloo.
#pragma once

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

#include <ATen/core/Tensor.h>

namespace torch::nn {
class Module;
}

/// torch.distributed for C++: process groups from torchrun's environment and collectives.
namespace gpulab::distributed {

/// A missing or malformed launcher variable, or a rendezvous that did not complete.
class DistributedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A collective that failed because another rank went away: a consequence, not the cause.
/// Launchers read it (through TORCHELASTIC_ERROR_FILE) to name the rank that failed first.
class PeerLost : public DistributedError {
 public:
  using DistributedError::DistributedError;
};

/// Where this process sits in the job, as the launcher told it (torchrun's variables).
struct World {
  int rank = 0;              ///< RANK: 0 .. world_size-1, unique in the whole job
  int local_rank = 0;        ///< LOCAL_RANK: 0 .. local_world_size-1, unique on this node
  int world_size = 1;        ///< WORLD_SIZE: processes in the job, all nodes
  int local_world_size = 1;  ///< LOCAL_WORLD_SIZE: processes on this node
  int node_rank = 0;         ///< GROUP_RANK: which node this is
  std::string master_addr;   ///< MASTER_ADDR: where rank 0 serves the rendezvous store
  int master_port = 0;       ///< MASTER_PORT

  /// Reads RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR and
  /// MASTER_PORT. A missing or invalid one throws DistributedError naming it and saying
  /// how to start the program (gpulab launch, torchrun --no-python).
  static World from_environment();
};

/// The rendezvous and collectives time limit: GPULAB_DIST_TIMEOUT seconds, default 60.
std::chrono::milliseconds timeout_from_environment();

/// One process group over all ranks of the job (c10d's TCPStore + Gloo or NCCL).
class ProcessGroup {
 public:
  /// Meets every other rank at world.master_addr:master_port (rank 0 serves the store).
  /// Throws DistributedError, naming the address, if they do not all arrive in `timeout`.
  explicit ProcessGroup(const World& world, std::chrono::milliseconds timeout = timeout_from_environment());
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  /// This process's rank in the group (`RANK`).
  int rank() const;
  /// How many processes the group has (`WORLD_SIZE`).
  int size() const;
  /// "gloo" or "nccl".
  std::string backend() const;

  /// Sums `tensor` over all ranks, in place.
  void all_reduce(at::Tensor& tensor);
  /// Replaces every rank's `tensor` with rank `root`'s, in place.
  void broadcast(at::Tensor& tensor, int root = 0);
  /// Averages the gradients of `module`'s parameters over all ranks (call after backward()).
  void all_reduce_gradients(torch::nn::Module& module);
  /// Gives every rank rank `root`'s parameters and buffers (call once, before training).
  void broadcast_parameters(torch::nn::Module& module, int root = 0);
  /// Returns when every rank has called it.
  void barrier();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// A hash of a module's parameter values, to compare ranks: equal on every rank after
/// broadcast_parameters and identical steps with averaged gradients.
std::string parameters_hash(const torch::nn::Module& module);

}  // namespace gpulab::distributed
