// Processes left behind. A lesson program runs in a process group of its own (run_process),
// so stopping checks that ran past their limit does not stop a lesson program they started:
// a grader makes itself the subreaper of everything it starts and stops those orphans.
#pragma once

#include <sys/types.h>

#include <vector>

namespace gpulab {

/// This process adopts every orphan among its descendants (PR_SET_CHILD_SUBREAPER).
void adopt_orphans();
/// The processes whose parent is `parent`, from /proc.
std::vector<pid_t> children_of(pid_t parent);
/// Kills every child of this process (and its process group) and reaps it, but those spared.
void stop_leftovers();
/// Leaves child `pid` alone in stop_leftovers and signal_leftovers (`spare` false: no more):
/// work that outlives what they clean up after (gpulab start's background build).
void spare_from_leftovers(pid_t pid, bool spare = true);
/// Kills every child of this process (and its process group) and reaps none: for a thread
/// that waits for one of them itself (grading::ChecksBeside).
void signal_leftovers();

}  // namespace gpulab
