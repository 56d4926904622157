#include "proc/launcher.h"
#include "proc/process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

namespace gpulab {
namespace {

using Clock = std::chrono::steady_clock;

// SIGINT/SIGTERM reach the loop through a pipe: a handler may only write(2).
int g_signal_pipe[2] = {-1, -1};
std::atomic<int> g_last_signal{0};

void on_signal(int signal) {
  if (signal != SIGCHLD) g_last_signal = signal;
  // SIGCHLD wakes the loop at once: workers are reaped in the order they ended, so the one
  // named as failing first is the one that did, not a peer whose collective broke after it.
  const char byte = signal == SIGCHLD ? 0 : static_cast<char>(signal);
  (void)!write(g_signal_pipe[1], &byte, 1);
}

void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // our reader went away: nothing better to do than drop the output
    done += static_cast<std::size_t>(n);
  }
}

// One worker's stream: bytes become whole prefixed lines; a last partial line is flushed at EOF.
struct Stream {
  int fd = -1;
  int target = -1;
  std::string prefix;
  std::string pending;

  void take(const char* data, std::size_t n) {
    pending.append(data, n);
    std::size_t start = 0;
    std::string lines;
    for (std::size_t end; (end = pending.find('\n', start)) != std::string::npos; start = end + 1)
      lines += prefix + pending.substr(start, end - start + 1);
    pending.erase(0, start);
    write_all(target, lines);
  }
  void finish() {
    if (!pending.empty()) write_all(target, prefix + pending + "\n");
    pending.clear();
    if (fd >= 0) close(fd);
    fd = -1;
  }
};

struct Running {
  WorkerOutcome outcome;
  Stream out, err;
  bool reaped = false;
};

[[noreturn]] void exec_worker(const std::vector<std::string>& command, const EnvChanges& env, int out_fd, int err_fd,
                              const sigset_t& mask_before_fork) {
  setpgid(0, 0);  // its own group: stopping it stops what it started (sh -c, a wrapper)
  // The launcher's handlers must not run here: a SIGTERM sent to this worker before it has
  // exec'd would otherwise write to the launcher's signal pipe and read as an interrupt.
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  signal(SIGCHLD, SIG_DFL);
  sigprocmask(SIG_SETMASK, &mask_before_fork, nullptr);
  dup2(out_fd, STDOUT_FILENO);
  dup2(err_fd, STDERR_FILENO);
  close_descriptors_from(3);  // a worker inherits nothing of the launcher's
  for (const auto& [name, value] : env) {
    if (value) setenv(name.c_str(), value->c_str(), 1);
    else unsetenv(name.c_str());
  }
  std::vector<char*> args;
  for (const auto& arg : command) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  execvp(args[0], args.data());
  const std::string message = "gpulab launch: cannot run '" + command[0] + "': " + std::strerror(errno) + "\n";
  (void)!write(STDERR_FILENO, message.data(), message.size());
  _exit(127);
}

// When a worker recorded its error (ms since the epoch), unless there is none or it says its
// collective broke because another rank went away ("peer_lost"). The file is the worker's
// (untrusted): anything unreadable counts as no record.
std::optional<long long> recorded_error_time(const std::string& path) {
  std::ifstream file(path);
  if (!file) return std::nullopt;
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (text.find("\"peer_lost\": true") != std::string::npos) return std::nullopt;
  const std::size_t key = text.find("\"time_ms\":");
  if (key == std::string::npos) return std::nullopt;
  char* end = nullptr;
  const long long ms = std::strtoll(text.c_str() + key + 10, &end, 10);
  return end != text.c_str() + key + 10 ? std::optional<long long>(ms) : std::nullopt;
}

void stop_group(const Running& worker, int signal) {
  if (!worker.reaped && worker.outcome.pid > 0) kill(-worker.outcome.pid, signal);
}

}  // namespace

void validate(const LaunchPlan& plan) {
  if (plan.command.empty()) throw std::invalid_argument("no program to launch: give it after --, e.g. gpulab launch --nproc-per-node 2 -- ./train");
  if (plan.nproc_per_node < 1 || plan.nproc_per_node > 256)
    throw std::invalid_argument("--nproc-per-node must be from 1 to 256, not " + std::to_string(plan.nproc_per_node));
  if (plan.nnodes < 1 || plan.nnodes > 64)
    throw std::invalid_argument("--nnodes must be from 1 to 64, not " + std::to_string(plan.nnodes));
  if (plan.node_rank && (*plan.node_rank < 0 || *plan.node_rank >= plan.nnodes))
    throw std::invalid_argument("--node-rank must be from 0 to --nnodes - 1 (" + std::to_string(plan.nnodes - 1) +
                                "), not " + std::to_string(*plan.node_rank));
  if (plan.nnodes * plan.nproc_per_node > 512) throw std::invalid_argument("more than 512 workers in all");
  if (plan.master_port < 0 || plan.master_port > 65535)
    throw std::invalid_argument("--master-port must be from 1 to 65535, not " + std::to_string(plan.master_port));
  if (plan.master_addr.empty()) throw std::invalid_argument("--master-addr is empty");
  if (!(plan.stop_timeout_s >= 0) || plan.stop_timeout_s > 600)
    throw std::invalid_argument("--stop-timeout must be from 0 to 600 seconds");
}

std::vector<WorkerSpec> plan_workers(const LaunchPlan& plan, const std::function<const char*(const char*)>& inherited) {
  validate(plan);
  if (plan.master_port == 0) throw std::invalid_argument("plan_workers: master_port not chosen");
  const int world = plan.nnodes * plan.nproc_per_node;
  std::mt19937_64 random(std::random_device{}());
  std::ostringstream run_id;
  run_id << std::hex << (random() & 0xffffffffffffull);
  std::vector<WorkerSpec> workers;
  const int first_node = plan.node_rank.value_or(0);
  const int last_node = plan.node_rank ? *plan.node_rank : plan.nnodes - 1;
  for (int node = first_node; node <= last_node; ++node) {
    for (int local = 0; local < plan.nproc_per_node; ++local) {
      WorkerSpec worker;
      worker.node_rank = node;
      worker.local_rank = local;
      worker.rank = node * plan.nproc_per_node + local;
      // All nodes on this host: each node's ranks get their own simulated node state.
      if (!plan.node_rank && plan.nnodes > 1) worker.host = "node" + std::to_string(node);
      auto set = [&](const char* name, const std::string& value) { worker.env.emplace_back(name, value); };
      auto set_unless_inherited = [&](const char* name, const std::string& value) {
        if (inherited(name) == nullptr) set(name, value);
      };
      set("RANK", std::to_string(worker.rank));
      set("LOCAL_RANK", std::to_string(local));
      set("GROUP_RANK", std::to_string(node));
      set("ROLE_RANK", std::to_string(worker.rank));
      set("ROLE_NAME", "default");
      set("LOCAL_WORLD_SIZE", std::to_string(plan.nproc_per_node));
      set("WORLD_SIZE", std::to_string(world));
      set("GROUP_WORLD_SIZE", std::to_string(plan.nnodes));
      set("ROLE_WORLD_SIZE", std::to_string(world));
      set("MASTER_ADDR", plan.master_addr);
      set("MASTER_PORT", std::to_string(plan.master_port));
      set("TORCHELASTIC_RESTART_COUNT", "0");
      set("TORCHELASTIC_MAX_RESTARTS", "0");
      set("TORCHELASTIC_RUN_ID", run_id.str());
      set("TORCHELASTIC_USE_AGENT_STORE", "False");  // rank 0 serves the store, not the launcher
      set_unless_inherited("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1");
      // torchrun's default: N processes each using every core would oversubscribe N times.
      if (plan.nproc_per_node > 1) set_unless_inherited("OMP_NUM_THREADS", "1");
      if (!worker.host.empty()) set("GPULAB_HOST", worker.host);
      workers.push_back(std::move(worker));
    }
  }
  return workers;
}

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error(std::string("cannot open a socket to find a free port: ") + std::strerror(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    const std::string why = std::strerror(errno);
    close(fd);
    throw std::runtime_error("cannot find a free port: " + why + " (give one with --master-port)");
  }
  close(fd);
  return ntohs(address.sin_port);
}

int process_group_of(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so after the last ')'.
  const std::size_t close_paren = text.rfind(')');
  if (close_paren == std::string::npos) return -1;
  std::istringstream fields(text.substr(close_paren + 1));
  std::string state;
  int parent = 0, group = -1;
  fields >> state >> parent >> group;
  return fields ? group : -1;
}

namespace {

// One launch, from the first fork to the root cause: the workers, their output streams, the
// launcher's signals (forwarded to every worker) and torchrun's error files.
class Launch {
 public:
  Launch(const LaunchPlan& plan, const Sampler& sample, int out_fd, int err_fd)
      : plan_(plan), sample_(sample), out_fd_(out_fd), err_fd_(err_fd) {
    if (pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
      throw std::runtime_error(std::string("gpulab launch: pipe: ") + std::strerror(errno));
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
    action.sa_flags = SA_NOCLDSTOP | SA_RESTART;
    sigaction(SIGCHLD, &action, &old_child_);
    g_last_signal = 0;
    // torchrun's error files: each worker may record the error that ended it there.
    error_dir_ = (std::filesystem::temp_directory_path() / "gpulab-launch-XXXXXX").string();
    if (mkdtemp(error_dir_.data()) == nullptr) error_dir_.clear();
  }
  ~Launch() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
    sigaction(SIGCHLD, &old_child_, nullptr);
    close(g_signal_pipe[0]);
    close(g_signal_pipe[1]);
    if (!error_dir_.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(error_dir_, ignored);
    }
  }
  Launch(const Launch&) = delete;
  Launch& operator=(const Launch&) = delete;

  LaunchResult run(const std::vector<WorkerSpec>& specs) {
    workers_.resize(specs.size());
    for (std::size_t i = 0; i < specs.size(); ++i) start(i, specs[i]);
    while (step()) {
    }
    return finish();
  }

 private:
  std::string error_file(int rank) const { return error_dir_ + "/rank" + std::to_string(rank) + "-error.json"; }

  [[noreturn]] void abort_start(const char* what) {
    for (auto& w : workers_) stop_group(w, SIGKILL);
    throw std::runtime_error(std::string("gpulab launch: ") + what + ": " + std::strerror(errno));
  }

  void start(std::size_t i, const WorkerSpec& spec) {
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) abort_start("pipe");
    // Signals stay blocked from fork until the child has reset its handlers (see exec_worker).
    sigset_t blocked, before_fork;
    sigemptyset(&blocked);
    for (int s : {SIGINT, SIGTERM, SIGCHLD}) sigaddset(&blocked, s);
    sigprocmask(SIG_BLOCK, &blocked, &before_fork);
    const pid_t pid = fork();
    if (pid != 0) sigprocmask(SIG_SETMASK, &before_fork, nullptr);
    if (pid < 0) abort_start("fork");
    if (pid == 0) {
      EnvChanges env = spec.env;
      if (!error_dir_.empty()) env.emplace_back("TORCHELASTIC_ERROR_FILE", error_file(spec.rank));
      exec_worker(plan_.command, env, out[1], err[1], before_fork);
    }
    setpgid(pid, pid);  // also here: no race with a signal sent before the child ran setpgid
    close(out[1]);
    close(err[1]);
    Running& w = workers_[i];
    w.outcome.spec = spec;
    w.outcome.pid = pid;
    const std::string prefix = "[rank" + std::to_string(spec.rank) + "]: ";
    w.out = Stream{out[0], out_fd_, prefix, {}};
    w.err = Stream{err[0], err_fd_, prefix, {}};
  }

  void stop_all(int signal) {
    for (auto& w : workers_)
      if (!w.reaped) {
        w.outcome.stopped = true;
        stop_group(w, signal);
      }
    if (!kill_at_)
      kill_at_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(plan_.stop_timeout_s));
  }

  // One round: read what is ready, reap who ended, sample, escalate. false once all is done.
  bool step() {
    std::vector<pollfd> fds;
    std::vector<Stream*> streams;
    fds.push_back({g_signal_pipe[0], POLLIN, 0});
    for (auto& w : workers_)
      for (Stream* s : {&w.out, &w.err})
        if (s->fd >= 0) {
          fds.push_back({s->fd, POLLIN, 0});
          streams.push_back(s);
        }
    bool all_reaped = true;
    for (const auto& w : workers_) all_reaped = all_reaped && w.reaped;
    if (all_reaped && streams.empty()) return false;
    const int ready = poll(fds.data(), fds.size(), 10);
    if (ready < 0 && errno != EINTR) return false;
    if (ready > 0) read_ready(fds, streams);
    const std::vector<int> live = reap();
    // About every 10 ms, however busy the pipes are (nvitop samples NVML the same way).
    if (!live.empty() && sample_ && Clock::now() - last_sample_ >= std::chrono::milliseconds(10)) {
      last_sample_ = Clock::now();
      sample_(live);
    }
    if (kill_at_ && Clock::now() >= *kill_at_)
      for (auto& w : workers_) stop_group(w, SIGKILL);
    // Every worker reaped but a pipe still open (a grandchild escaped the group): give up on it.
    if (live.empty() && kill_at_ && Clock::now() >= *kill_at_ + std::chrono::seconds(1))
      for (auto& w : workers_) w.out.finish(), w.err.finish();
    return true;
  }

  void read_ready(const std::vector<pollfd>& fds, const std::vector<Stream*>& streams) {
    if (fds[0].revents & POLLIN) {
      char byte;
      int interrupt = 0;
      while (read(g_signal_pipe[0], &byte, 1) == 1)
        if (byte != 0) interrupt = byte;
      if (interrupt != 0) {
        result_.interrupted_by = interrupt;
        stop_all(interrupt);  // forward what we got; SIGKILL follows after the stop timeout
      }
    }
    for (std::size_t k = 1; k < fds.size(); ++k) {
      if ((fds[k].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      char buffer[65536];
      const ssize_t n = read(fds[k].fd, buffer, sizeof buffer);
      if (n > 0) streams[k - 1]->take(buffer, static_cast<std::size_t>(n));
      else if (n == 0 || errno != EINTR) streams[k - 1]->finish();
    }
  }

  // Reaps the workers that ended; returns the pids still running.
  std::vector<int> reap() {
    std::vector<int> live;
    for (auto& w : workers_) {
      if (w.reaped) continue;
      int status = 0;
      if (waitpid(w.outcome.pid, &status, WNOHANG) != w.outcome.pid) {
        live.push_back(w.outcome.pid);
        continue;
      }
      w.reaped = true;
      if (WIFEXITED(status)) w.outcome.exit_code = WEXITSTATUS(status);
      else if (WIFSIGNALED(status)) w.outcome.signal = WTERMSIG(status);
      if (w.outcome.failed() && (!w.outcome.stopped || w.outcome.signal == 0)) {
        failures_.push_back(static_cast<int>(&w - workers_.data()));
        if (!kill_at_) stop_all(SIGTERM);
      }
      // What it started (sh -c ... &) must not outlive it holding our pipes open.
      kill(-w.outcome.pid, SIGKILL);
    }
    return live;
  }

  LaunchResult finish() {
    for (auto& w : workers_) {
      w.out.finish();
      w.err.finish();
      result_.workers.push_back(w.outcome);
    }
    result_.first_failure = root_cause();
    if (result_.first_failure >= 0) {
      // A root cause stopped by us while it was exiting had recorded its error: it failed (1).
      const WorkerOutcome& root = result_.workers[static_cast<std::size_t>(result_.first_failure)];
      result_.exit_code = root.stopped && root.signal != 0 ? 1 : root.status();
    } else if (result_.interrupted_by != 0) {
      result_.exit_code = 128 + result_.interrupted_by;
    }
    return result_;
  }

  // The root cause, as torchrun finds it: the earliest error a worker recorded in its error
  // file (even if it was stopped while exiting), leaving out collectives broken by a peer;
  // failing that, the first worker that ended with an error.
  int root_cause() const {
    int first = -1;
    long long earliest = 0;
    for (std::size_t i = 0; i < workers_.size(); ++i) {
      const auto recorded = recorded_error_time(error_file(workers_[i].outcome.spec.rank));
      if (recorded && (first < 0 || *recorded < earliest)) {
        first = static_cast<int>(i);
        earliest = *recorded;
      }
    }
    if (first < 0 && !failures_.empty() && result_.interrupted_by == 0) first = failures_.front();
    return first;
  }

  const LaunchPlan& plan_;
  const Sampler& sample_;
  int out_fd_;
  int err_fd_;
  struct sigaction old_int_ {}, old_term_ {}, old_child_ {};
  std::string error_dir_;
  std::vector<Running> workers_;
  std::vector<int> failures_;  // indices into workers_, in the order they ended
  std::optional<Clock::time_point> kill_at_;  // set once the launcher stops the workers
  Clock::time_point last_sample_{};
  LaunchResult result_;
};

}  // namespace

LaunchResult run_workers(const LaunchPlan& plan, const std::vector<WorkerSpec>& specs, const Sampler& sample,
                         int out_fd, int err_fd) {
  Launch launch(plan, sample, out_fd, err_fd);
  return launch.run(specs);
}

}  // namespace gpulab
