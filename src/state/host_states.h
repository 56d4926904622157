// Listing a host's states: every process that holds memory on the node, with its command
// and its RANK, per simulated host (NODE@HOST.state) — what `gpulab smi --watch` shows
// (docs/node-picture.md). Reads the node state files and /proc; renders nothing.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gpulab/observe.h"
#include "model/node.h"
#include "state/node_state.h"

namespace gpulab {

/// One physical GPU of a host, as the watch shows it.
struct HostGpu {
  int physical_index = 0;         ///< nvidia-smi's index
  std::string name;               ///< the product name
  std::uint64_t total_bytes = 0;  ///< its memory
  std::uint64_t used_bytes = 0;   ///< every process's usage together
};

/// One process as the watch shows it: the node state's record plus what /proc says.
struct ProcessRow {
  int pid = 0;
  std::string command;     ///< /proc/PID/comm, else the name in the node state
  std::string rank = "-";  ///< RANK from its environment; "?" when unreadable
  std::vector<std::uint64_t> used_bytes;  ///< per physical GPU
  std::uint64_t context_mask = 0;         ///< bit p set: a context on physical GPU p
  bool contexts_known = true;             ///< the node state records contexts; NVML does not say
};

/// One simulated host's node state (or, on real GPUs, the machine's).
struct HostView {
  std::string host;   ///< its GPULAB_HOST; "" for this host
  std::string error;  ///< why its node state could not be read; "" when it was
  std::vector<HostGpu> gpus;
  std::vector<std::uint64_t> context_bytes;  ///< per physical GPU: one context's size (node file), 0 unknown
  std::vector<ProcessRow> processes;
};

/// The row of process `pid`, usage left empty: its command from /proc/PID/comm (else
/// `state_name`) and RANK from /proc/PID/environ ("?" when that is unreadable: not ours).
ProcessRow describe_process(int pid, const std::string& state_name);

/// One process's usage of one GPU, as an outside observer (NVML) reports it.
struct ObservedUsage {
  int pid = 0;
  std::string name;  ///< the observer's name for it, used when /proc has none
  int physical_index = 0;
  std::uint64_t used_bytes = 0;
};

/// The one machine of real GPUs: its GPUs and a row per process (pid order) with its usage
/// of each GPU; contexts unknown.
HostView observed_host(std::vector<HostGpu> gpus, const std::vector<ObservedUsage>& usages);
/// The same, from what an Observer (NVML) sees of each GPU and its processes.
HostView observed_host(const std::vector<GpuView>& gpus);

/// Host -> state file of `node`: this host's always (as plain smi shows it, under
/// GPULAB_HOST when set), with `all_hosts` every other NODE@HOST.state of the state folder.
std::map<std::string, std::string> host_state_files(const Node& node, bool all_hosts);

/// Reads the node states of a simulated node's hosts, each file kept open between reads.
class HostStates {
 public:
  HostStates(Node node, bool all_hosts) : node_(std::move(node)), all_hosts_(all_hosts) {}

  /// Every host's GPUs and processes, hosts in name order ("" first); a host whose state
  /// cannot be read says why in its error.
  std::vector<HostView> read();

 private:
  HostView read_host(const std::string& host, const std::string& path);

  Node node_;
  bool all_hosts_;
  std::map<std::string, std::unique_ptr<NodeState>> states_;  // by path
};

/// What `gpulab smi --watch` watches: every simulated host's node state (HostStates), or on
/// real GPUs the one machine `observer` (NVML) sees.
class WatchedHosts {
 public:
  WatchedHosts(std::unique_ptr<Observer> observer, bool all_hosts);
  std::vector<HostView> read();
  const Observer& observer() const { return *observer_; }

 private:
  std::unique_ptr<Observer> observer_;
  std::optional<HostStates> states_;
};

}  // namespace gpulab
