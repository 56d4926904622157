// A student's program, run where it cannot reach the grader. In a grading box (box.h) the
// grader (`gpulab class grade-in-box`) and each lesson's checks run beside the programs
// they judge; each such program (a lesson's exercise, its ranks under the launcher, a
// prestarted parent and its runs) gets a PID namespace of its own, so the processes that
// decide its verdict are not there to find in /proc, signal, trace or write to, and a
// mount namespace in which the system is read-only, the grader's scratch folder is hidden
// and only the box's run area can be written.
//
// Outside a box nothing changes: the commands are returned as given.
#pragma once

#include <string>
#include <vector>

#include "proc/process.h"

namespace gpulab {

/// Set by the grader in a box: the folder confined runs may write (their node state, their
/// reports, their TMPDIR). Its absence means "not in a box".
inline constexpr const char* kConfineVariable = "GPULAB_CONFINE";

/// Set by the grader in a box: the folder of the reference solutions the checks compare a
/// student's runs with. Hidden from every confined run but the reference's own: a student's
/// program (or compiler, `.incbin`) that could read them could run them as its own.
inline constexpr const char* kReferenceVariable = "GPULAB_REFERENCE_DIR";

/// The run area when this process is in a box; "" otherwise.
std::string confined_area();

/// A folder for one run's files, where that run can write them: in the run area in a box,
/// else in the temporary folder. Made fresh (mkdtemp); the caller removes it.
std::string fresh_run_folder(const std::string& prefix);

/// `argv` as it must be started: in a box, under bubblewrap with a PID and mount namespace
/// of its own (the caller's TMPDIR hidden when it is not the run area, the reference
/// solutions hidden unless `argv` names one), where it may write only the run area and the
/// folders `writable`; else unchanged.
///
/// Bubblewrap ends with the thread that starts it (`--die-with-parent` is PR_SET_PDEATHSIG,
/// which follows the thread, not the process). Right for a run its thread waits for; a
/// program that outlives its starting thread (a prestarted parent, made in whichever
/// thread first needs it) asks for `Lifetime::kOwnLifeline` and ends by its own means.
enum class Lifetime { kStartingThread, kOwnLifeline };
std::vector<std::string> confined(const std::vector<std::string>& argv, const std::vector<std::string>& writable = {},
                                  Lifetime lifetime = Lifetime::kStartingThread);

/// A confined run's end as the program's own: bubblewrap ends with 128 + N when the
/// program it ran was killed by signal N.
void program_end_of_confined(ProcessResult& result);

}  // namespace gpulab
