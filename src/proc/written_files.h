// Which worker wrote which file: each worker of a launch gets a temporary folder of its own
// (TMPDIR), watched with inotify from before it starts, so the launcher can say which rank
// wrote a checkpoint there: a fact the filesystem observes, not one the worker reports.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "proc/launcher.h"

namespace gpulab {

class WrittenFiles {
 public:
  /// A folder per worker of `workers` under a fresh temporary folder, each watched; sets
  /// TMPDIR in each worker's environment to its own. Watching is best effort: without
  /// inotify the workers still get their folders and nothing is reported written.
  explicit WrittenFiles(std::vector<WorkerSpec>& workers);
  ~WrittenFiles();  ///< removes the folders and what the workers left in them
  WrittenFiles(const WrittenFiles&) = delete;
  WrittenFiles& operator=(const WrittenFiles&) = delete;

  /// The names of the files each rank wrote (closed after writing, or moved in) in its
  /// folder, in the order they were written, each once. Call after the workers ended.
  std::map<int, std::vector<std::string>> by_rank();

 private:
  std::string root_;
  int inotify_ = -1;
  std::map<int, int> rank_of_watch_;
};

}  // namespace gpulab
