// Bubblewrap's command line for a grading box, and the limits around it. Processes and
// memory are limited by a cgroup where this process can make one (root), else by rlimits
// in the box: RLIMIT_NPROC counts the box's own
// processes there (the box is a user namespace of its own), but the kernel does not apply
// it to root, which is why root needs the cgroup.
#include "grading/box.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "proc/confine.h"
#include "proc/text_file.h"

namespace fs = std::filesystem;

namespace gpulab::grading {
namespace {

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.flush();
  return static_cast<bool>(out);
}

// "max 3" in pids.events, "oom_kill 1" in memory.events or memory.oom_control: the count.
long counter(const std::string& file, const std::string& key) {
  std::istringstream in(read_text_file(file));
  std::string name;
  long value = 0;
  while (in >> name >> value)
    if (name == key) return value;
  return 0;
}

// A cgroup (v2, or v1's pids and memory hierarchies) for one box; removed with the object.
class BoxCgroup {
 public:
  BoxCgroup(const BoxLimits& limits) {
    if (geteuid() != 0) return;  // a user's cgroups are systemd's to delegate: rlimits instead
    static std::atomic<int> count{0};
    const std::string name = fmt::format("gpulab-box-{}-{}", getpid(), count++);
    std::error_code error;
    if (fs::exists("/sys/fs/cgroup/cgroup.controllers")) {  // v2
      write_file("/sys/fs/cgroup/cgroup.subtree_control", "+pids +memory");
      const std::string dir = "/sys/fs/cgroup/" + name;
      if (!fs::create_directory(dir, error)) return;
      dirs_.push_back(dir);
      if (write_file(dir + "/pids.max", std::to_string(limits.processes))) pids_ = dir;
      if (write_file(dir + "/memory.max", std::to_string(limits.memory_bytes))) memory_ = dir;
      kind_ = "cgroup v2";
    } else {
      for (const char* controller : {"pids", "memory"}) {
        const std::string dir = fmt::format("/sys/fs/cgroup/{}/{}", controller, name);
        if (!fs::exists(fmt::format("/sys/fs/cgroup/{}", controller)) || !fs::create_directory(dir, error)) continue;
        dirs_.push_back(dir);
        if (std::string(controller) == "pids" && write_file(dir + "/pids.max", std::to_string(limits.processes))) pids_ = dir;
        if (std::string(controller) == "memory" && write_file(dir + "/memory.limit_in_bytes", std::to_string(limits.memory_bytes)))
          memory_ = dir;
      }
      kind_ = "cgroup v1";
    }
  }
  ~BoxCgroup() {
    for (const auto& dir : dirs_) {
      // Whatever is still in it (nothing, once bwrap's namespace is gone) is stopped first.
      for (int round = 0; round < 50; ++round) {
        std::istringstream procs(read_text_file(dir + "/cgroup.procs"));
        bool any = false;
        for (pid_t pid = 0; procs >> pid;) {
          any = true;
          kill(pid, SIGKILL);
        }
        if (!any) break;
        usleep(20000);
      }
      std::error_code error;
      fs::remove(dir, error);
    }
  }
  BoxCgroup(const BoxCgroup&) = delete;
  BoxCgroup& operator=(const BoxCgroup&) = delete;

  bool limits_processes() const { return !pids_.empty(); }
  bool limits_memory() const { return !memory_.empty(); }
  /// The cgroup.procs files the box's first process joins.
  std::vector<std::string> procs_files() const {
    std::vector<std::string> files;
    for (const auto& dir : dirs_) files.push_back(dir + "/cgroup.procs");
    return files;
  }
  std::string describe() const {
    std::string what;
    if (limits_processes()) what += "processes";
    if (limits_memory()) what += std::string(what.empty() ? "" : ", ") + "memory";
    return what.empty() ? "" : fmt::format("{} ({})", kind_, what);
  }
  bool processes_hit() const { return limits_processes() && counter(pids_ + "/pids.events", "max") > 0; }
  bool memory_hit() const {
    if (!limits_memory()) return false;
    return counter(memory_ + (kind_ == "cgroup v2" ? "/memory.events" : "/memory.oom_control"), "oom_kill") > 0;
  }

 private:
  std::vector<std::string> dirs_;
  std::string pids_;
  std::string memory_;
  std::string kind_;
};

// /bin, /lib, … are links into /usr on merged-/usr systems, folders elsewhere.
void add_system(std::vector<std::string>& args) {
  args.insert(args.end(), {"--ro-bind", "/usr", "/usr"});
  for (const char* top : {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}) {
    std::error_code error;
    if (fs::is_symlink(top, error)) args.insert(args.end(), {"--symlink", fs::read_symlink(top, error).string(), top});
    else if (fs::is_directory(top, error)) args.insert(args.end(), {"--ro-bind", top, top});
  }
  // Only what programs and compilers read from /etc: not the password hashes, not the
  // instructor's configuration.
  for (const char* file : {"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/passwd",
                           "/etc/group", "/etc/nsswitch.conf", "/etc/hosts", "/etc/localtime"})
    args.insert(args.end(), {"--ro-bind-try", file, file});
  args.insert(args.end(), {"--proc", "/proc", "--dev", "/dev"});
}

}  // namespace

std::string box_unavailable() {
  ProcessOptions probe;
  probe.argv = {"bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin",
                "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "/usr/bin/true"};
  probe.timeout_s = 30;
  try {
    const ProcessResult result = run_process(probe);
    if (result.ok()) return "";
    return "bubblewrap cannot make a box here (" + result.outcome(probe.timeout_s) + "): " + result.err;
  } catch (const std::exception&) {
    return "bubblewrap (bwrap) is not installed: ./gpulab class grade installs it (Debian's bubblewrap)";
  }
}

std::vector<std::string> box_arguments(const BoxLayout& layout, const BoxLimits& limits,
                                       const std::vector<std::string>& command, bool memory_counted) {
  const std::string disk = std::to_string(limits.disk_bytes);
  std::vector<std::string> args = {"bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--hostname", "gpulab-box"};
  add_system(args);
  // The writable places, each a memory file system of the box's disk size; the rest of the
  // box (its root included) is remounted read-only below.
  for (const char* place : {kRunArea, kGraderScratch, "/dev/shm"}) args.insert(args.end(), {"--size", disk, "--tmpfs", place});
  for (const auto& path : layout.read_only) args.insert(args.end(), {"--ro-bind", path, path});
  args.insert(args.end(), {"--ro-bind", layout.student, kStudentInBox});
  if (!layout.bin.empty()) {
    args.insert(args.end(), {"--size", disk, "--tmpfs", layout.bin});
    for (const auto& program : layout.programs) args.insert(args.end(), {"--ro-bind", program, program});
  }
  for (const auto& program : layout.references)
    args.insert(args.end(), {"--ro-bind", program, std::string(kReferencesInBox) + "/" + fs::path(program).filename().string()});
  // Only the variables named here: bwrap itself starts with none of ours (a program in the
  // box could read the first process's environment in /proc).
  args.insert(args.end(), {"--clearenv", "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/tmp/home", "--setenv",
                           "TMPDIR", kGraderScratch, "--setenv", "LANG", "C.UTF-8", "--setenv", kConfineVariable, kRunArea,
                           "--dir", "/tmp/home", "--chdir", kRunArea, "--remount-ro", "/", "--remount-ro", "/dev"});
  if (!layout.references.empty()) args.insert(args.end(), {"--setenv", kReferenceVariable, kReferencesInBox});
  for (const auto& [name, value] : layout.env) args.insert(args.end(), {"--setenv", name, value});
  args.push_back("--");
  // In the box: rlimits. A process count for a user other than root; one file's size; no
  // core files; memory per process where no cgroup counts it.
  args.insert(args.end(), {"prlimit", fmt::format("--nproc={}", limits.processes), "--fsize=" + disk, "--core=0"});
  if (!memory_counted) args.push_back(fmt::format("--as={}", limits.memory_bytes));
  args.push_back("--");
  args.insert(args.end(), command.begin(), command.end());
  return args;
}

BoxResult run_in_box(const BoxLayout& layout, const BoxLimits& limits, const std::vector<std::string>& command,
                     int result_fd) {
  BoxCgroup cgroup(limits);
  std::vector<std::string> args;
  // Join the cgroup first, then become the box: everything in it is counted.
  const auto procs = cgroup.procs_files();
  if (!procs.empty()) {
    args = {"/bin/sh", "-c", R"(while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@")", "sh"};
    args.insert(args.end(), procs.begin(), procs.end());
    args.push_back("--");
  }
  const auto box = box_arguments(layout, limits, command, cgroup.limits_memory());
  args.insert(args.end(), box.begin(), box.end());

  ProcessOptions options;
  options.argv = args;
  options.clear_env = true;
  options.env = {{"PATH", "/usr/bin:/bin"}};
  options.pass_fd = result_fd;
  options.timeout_s = limits.wall_s;
  BoxResult result;
  result.process = run_process(options);
  if (result.process.timed_out) result.limits_hit.push_back("time");
  if (cgroup.processes_hit()) result.limits_hit.push_back("processes");
  if (cgroup.memory_hit()) result.limits_hit.push_back("memory");
  const std::string kept = cgroup.describe();
  result.enforcement = kept.empty() ? "rlimits in a user namespace" : kept + ", rlimits";
  if (result.process.exit_code == 125 && !procs.empty())
    throw std::runtime_error("cannot move the box into its cgroup: " + result.process.err);
  return result;
}

}  // namespace gpulab::grading
