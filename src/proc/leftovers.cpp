#include "proc/leftovers.h"

#include <dirent.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <sstream>
#include <string>

#include "proc/text_file.h"

namespace gpulab {

void adopt_orphans() { prctl(PR_SET_CHILD_SUBREAPER, 1); }

std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> children;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return children;
  while (const dirent* entry = readdir(proc)) {
    const std::string name = entry->d_name;
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = read_text_file("/proc/" + name + "/stat");
    const auto close_paren = stat.rfind(')');
    if (close_paren == std::string::npos) continue;
    std::istringstream fields(stat.substr(close_paren + 1));
    std::string state;
    long ppid = 0;
    fields >> state >> ppid;
    if (ppid == parent) children.push_back(static_cast<pid_t>(std::stol(name)));
  }
  closedir(proc);
  return children;
}

namespace {

// Kills each child with its group (a lesson program and what it started), or it alone.
void kill_children(const std::vector<pid_t>& children) {
  for (const pid_t child : children) {
    kill(-child, SIGKILL);
    kill(child, SIGKILL);
  }
}

std::mutex spared_lock;
std::set<pid_t> spared;

// This process's children, less those spared.
std::vector<pid_t> leftovers() {
  std::vector<pid_t> children = children_of(getpid());
  const std::lock_guard<std::mutex> hold(spared_lock);
  children.erase(std::remove_if(children.begin(), children.end(), [](pid_t pid) { return spared.count(pid) > 0; }),
                 children.end());
  return children;
}

}  // namespace

void spare_from_leftovers(pid_t pid, bool spare) {
  const std::lock_guard<std::mutex> hold(spared_lock);
  if (spare) spared.insert(pid);
  else spared.erase(pid);
}

void signal_leftovers() { kill_children(leftovers()); }

void stop_leftovers() {
  for (int round = 0; round < 100; ++round) {
    const auto children = leftovers();
    if (children.empty()) return;
    kill_children(children);
    for (const pid_t child : children) waitpid(child, nullptr, 0);
  }
}

}  // namespace gpulab
