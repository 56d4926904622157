// The state of one simulated node shared by every process that uses it: which processes
// hold memory on which physical GPU. It plays the role of the driver's bookkeeping that
// nvidia-smi reads, so any process (a lesson, `gpulab smi`, a DDP rank) sees the others.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "gpulab/node.h"

namespace gpulab {

/// One live process's footprint on the node.
struct ProcessUsage {
  int pid = 0;
  std::string name;
  std::vector<std::uint64_t> used_bytes;  ///< per physical GPU: context + reserved memory
  std::uint64_t context_mask = 0;         ///< bit p set: a context exists on physical GPU p
  /// The one MIG instance the process can use (its usage of that GPU is in that slice),
  /// as physical GPU and index into Gpu::mig; -1 when it uses whole GPUs.
  int mig_gpu = -1;
  int mig_instance = -1;

  /// The MIG instance this process's usage of `physical` belongs to; -1: the whole GPU.
  int instance_on(int physical) const { return physical == mig_gpu ? mig_instance : -1; }
};

/// A memory-mapped file (one per node name, under the state directory) guarded by flock.
/// Slots of processes that are gone — exited or killed, SIGKILL included, zombies too — are
/// ignored and reused: liveness is checked by pid and process start time, so nobody cleans up.
/// A file that is broken (wrong size, magic, version) or describes another node is
/// rebuilt with a warning on stderr.
class NodeState {
 public:
  explicit NodeState(const Node& node, std::string path = {});
  ~NodeState();
  NodeState(const NodeState&) = delete;
  NodeState& operator=(const NodeState&) = delete;

  /// The state directory: GPULAB_STATE_DIR, else $XDG_RUNTIME_DIR/gpulab, else /tmp/gpulab-UID.
  static std::string default_directory();
  static std::string default_path(const Node& node);

  /// Publishes this process's record if, on `physical`, every other live process's usage
  /// plus `mine.used_bytes[physical]` fits in `capacity`. Returns false (and writes nothing)
  /// when it does not fit; `others_bytes` receives the other processes' usage there. On a
  /// MIG instance only processes on the same instance count: each has its own memory slice.
  bool publish_if_fits(const ProcessUsage& mine, int physical, std::uint64_t capacity,
                       std::uint64_t* others_bytes);
  /// Publishes this process's record unconditionally (memory released, context created).
  void publish(const ProcessUsage& mine);
  /// Removes this process's record (normal exit).
  void withdraw();

  /// Every live process with a record, in slot order.
  std::vector<ProcessUsage> processes();
  /// Node-wide usage of a physical GPU by all live processes; with `mig_instance` >= 0, of
  /// that MIG instance's slice only.
  std::uint64_t used_bytes(int physical, int mig_instance = -1);

  const std::string& path() const { return path_; }

 private:
  struct Layout;
  // Holds the process mutex and the file lock, with the file validated, for one operation.
  class Exclusive {
   public:
    explicit Exclusive(NodeState& state);
    ~Exclusive();
    Exclusive(const Exclusive&) = delete;
    Exclusive& operator=(const Exclusive&) = delete;

   private:
    NodeState& state_;
    std::lock_guard<std::mutex> guard_;
  };
  void lock();
  void unlock();
  void validate_or_rebuild();
  void reopen_after_fork();
  int find_own_slot(bool claim);

  std::string path_;
  std::uint64_t fingerprint_ = 0;
  int gpu_count_ = 0;
  int fd_ = -1;
  Layout* map_ = nullptr;
  std::mutex mutex_;  // flock does not exclude threads of one process
  int owner_pid_ = 0;  // the process that opened fd_ (a forked child reopens the file)
  int own_slot_ = -1;
  std::uint64_t own_start_time_ = 0;
};

/// Start time of a process in clock ticks since boot (/proc/PID/stat); 0 if it is gone,
/// a zombie included (ended, not yet reaped: its GPU memory is already free).
std::uint64_t process_start_time(int pid);

}  // namespace gpulab
