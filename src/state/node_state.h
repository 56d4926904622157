// The state of one simulated node shared by every process that uses it: which processes
// hold memory on which physical GPU. It plays the role of the driver's bookkeeping that
// nvidia-smi reads, so any process (a lesson, `gpulab smi`, a DDP rank) sees the others.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "model/node.h"
#include "state/state_folder.h"

namespace gpulab {

/// One live process's footprint on the node.
struct ProcessUsage {
  int pid = 0;         ///< its process id
  std::string name;    ///< its program name, as nvidia-smi shows it
  std::vector<std::uint64_t> used_bytes;  ///< per physical GPU: context + reserved memory
  std::uint64_t context_mask = 0;         ///< bit p set: a context exists on physical GPU p
  /// The one MIG instance the process can use (its usage of that GPU is in that slice),
  /// as physical GPU and index into Gpu::mig; -1 when it uses whole GPUs.
  int mig_gpu = -1;       ///< the MIG instance's physical GPU
  int mig_instance = -1;  ///< the MIG instance's index into Gpu::mig

  /// The MIG instance this process's usage of `physical` belongs to; -1: the whole GPU.
  int instance_on(int physical) const { return physical == mig_gpu ? mig_instance : -1; }
};

/// A file (one per node name, under the state folder) guarded by flock, read whole and
/// written one slot at a time under the lock.
/// Slots of processes that are gone — exited or killed, SIGKILL included, zombies too — are
/// ignored and reused: liveness is checked by pid and process start time, so nobody cleans up.
/// A file of ours that is broken (wrong size, magic, version) or describes another node is
/// rebuilt with a warning on stderr. The folder and the file are checked first
/// (state_folder.h): gpulab never follows a symbolic link there nor rewrites another's file.
/// The contents are untrusted: any bytes at all make no access out of bounds, no hang and
/// no signal; a record counts only for a live process, once per pid, at most a GPU's size.
class NodeState {
 public:
  /// Opens the state of `node` at `path` (default_path when empty); throws UnsafeStateError
  /// when the folder or the file fails the checks for `sharing`.
  explicit NodeState(const Node& node, std::string path = {},
                     StateSharing sharing = state_sharing_from_environment());
  ~NodeState();
  NodeState(const NodeState&) = delete;
  NodeState& operator=(const NodeState&) = delete;

  /// The state folder: GPULAB_STATE_DIR, else $XDG_RUNTIME_DIR/gpulab, else /tmp/gpulab-UID.
  /// GPULAB_SHARED_NODE=1 requires GPULAB_STATE_DIR (a group folder): throws without it.
  static std::string default_directory();
  /// FOLDER/NODE.state, or FOLDER/NODE\@HOST.state under GPULAB_HOST (one of several
  /// simulated machines on this host); a GPULAB_HOST that is not a plain name throws.
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

  /// Every live process with a record, in slot order. Names are printable ASCII (other
  /// bytes become '?'); per-GPU usage is at most the GPU's size.
  std::vector<ProcessUsage> processes();
  /// Node-wide usage of a physical GPU by all live processes; with `mig_instance` >= 0, of
  /// that MIG instance's slice only.
  std::uint64_t used_bytes(int physical, int mig_instance = -1);

  /// The state file.
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
  void load_or_rebuild();
  void rebuild(const std::string& problem);
  void write_slot(int index);
  void reopen_after_fork();
  std::vector<int> live_slots() const;
  int find_own_slot(bool claim);
  std::uint64_t usage(int slot, int physical) const;
  void check_physical(int physical) const;

  std::string path_;
  StateSharing sharing_;
  std::uint64_t fingerprint_ = 0;
  int gpu_count_ = 0;
  std::vector<std::uint64_t> capacity_;  // per physical GPU: no record counts for more
  int folder_fd_ = -1;  // the checked folder: the file is always opened relative to it
  int fd_ = -1;
  std::unique_ptr<Layout> image_;  // the file as last read under the lock
  std::mutex mutex_;  // flock does not exclude threads of one process
  int owner_pid_ = 0;  // the process that opened fd_ (a forked child reopens the file)
  std::uint64_t own_start_time_ = 0;
};

/// Start time of a process in clock ticks since boot (/proc/PID/stat); 0 if it is gone,
/// a zombie included (ended, not yet reaped: its GPU memory is already free).
std::uint64_t process_start_time(int pid);

}  // namespace gpulab
