#include "proc/written_files.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include <sys/inotify.h>
#include <unistd.h>

namespace gpulab {

WrittenFiles::WrittenFiles(std::vector<WorkerSpec>& workers) {
  std::string pattern = (std::filesystem::temp_directory_path() / "gpulab-launch-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("gpulab launch: cannot make the workers' temporary folders");
  root_ = pattern;
  inotify_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  for (WorkerSpec& worker : workers) {
    const std::string folder = root_ + "/rank" + std::to_string(worker.rank);
    std::filesystem::create_directory(folder);
    if (inotify_ >= 0) {
      const int watch = inotify_add_watch(inotify_, folder.c_str(), IN_CLOSE_WRITE | IN_MOVED_TO);
      if (watch >= 0) rank_of_watch_[watch] = worker.rank;
    }
    worker.env.emplace_back("TMPDIR", folder);
  }
}

WrittenFiles::~WrittenFiles() {
  if (inotify_ >= 0) close(inotify_);
  std::error_code ignored;
  std::filesystem::remove_all(root_, ignored);
}

std::map<int, std::vector<std::string>> WrittenFiles::by_rank() {
  std::map<int, std::vector<std::string>> written;
  if (inotify_ < 0) return written;
  alignas(inotify_event) char buffer[64 * 1024];
  for (ssize_t got; (got = read(inotify_, buffer, sizeof buffer)) > 0;) {
    for (char* at = buffer; at < buffer + got;) {
      const auto* event = reinterpret_cast<const inotify_event*>(at);
      at += sizeof(inotify_event) + event->len;
      const auto rank = rank_of_watch_.find(event->wd);
      if (rank == rank_of_watch_.end() || event->len == 0 || (event->mask & IN_ISDIR) != 0) continue;
      auto& names = written[rank->second];
      const std::string name = event->name;
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
  }
  return written;
}

}  // namespace gpulab
