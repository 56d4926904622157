#include "gpulab/launcher.h"

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

LaunchResult run_workers(const LaunchPlan& plan, const std::vector<WorkerSpec>& specs, const Sampler& sample,
                         int out_fd, int err_fd) {
  if (pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
    throw std::runtime_error(std::string("gpulab launch: pipe: ") + std::strerror(errno));
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  struct sigaction old_int {}, old_term {}, old_child {};
  sigaction(SIGINT, &action, &old_int);
  sigaction(SIGTERM, &action, &old_term);
  action.sa_flags = SA_NOCLDSTOP | SA_RESTART;
  sigaction(SIGCHLD, &action, &old_child);
  g_last_signal = 0;

  std::vector<Running> workers(specs.size());
  LaunchResult result;
  // torchrun's error files: each worker may record the error that ended it there.
  std::string error_dir = (std::filesystem::temp_directory_path() / "gpulab-launch-XXXXXX").string();
  if (mkdtemp(error_dir.data()) == nullptr) error_dir.clear();
  auto error_file = [&](int rank) { return error_dir + "/rank" + std::to_string(rank) + "-error.json"; };
  std::vector<int> failures;  // indices into workers, in the order they ended
  auto cleanup = [&] {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
    sigaction(SIGCHLD, &old_child, nullptr);
    close(g_signal_pipe[0]);
    close(g_signal_pipe[1]);
    if (!error_dir.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(error_dir, ignored);
    }
  };

  for (std::size_t i = 0; i < specs.size(); ++i) {
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
      for (auto& w : workers) stop_group(w, SIGKILL);
      cleanup();
      throw std::runtime_error(std::string("gpulab launch: pipe: ") + std::strerror(errno));
    }
    // Signals stay blocked from fork until the child has reset its handlers (see exec_worker).
    sigset_t blocked, before_fork;
    sigemptyset(&blocked);
    for (int s : {SIGINT, SIGTERM, SIGCHLD}) sigaddset(&blocked, s);
    sigprocmask(SIG_BLOCK, &blocked, &before_fork);
    const pid_t pid = fork();
    if (pid != 0) sigprocmask(SIG_SETMASK, &before_fork, nullptr);
    if (pid < 0) {
      for (auto& w : workers) stop_group(w, SIGKILL);
      cleanup();
      throw std::runtime_error(std::string("gpulab launch: fork: ") + std::strerror(errno));
    }
    if (pid == 0) {
      EnvChanges env = specs[i].env;
      if (!error_dir.empty()) env.emplace_back("TORCHELASTIC_ERROR_FILE", error_file(specs[i].rank));
      exec_worker(plan.command, env, out[1], err[1], before_fork);
    }
    setpgid(pid, pid);  // also here: no race with a signal sent before the child ran setpgid
    close(out[1]);
    close(err[1]);
    Running& w = workers[i];
    w.outcome.spec = specs[i];
    w.outcome.pid = pid;
    const std::string prefix = "[rank" + std::to_string(specs[i].rank) + "]: ";
    w.out = Stream{out[0], out_fd, prefix, {}};
    w.err = Stream{err[0], err_fd, prefix, {}};
  }

  std::optional<Clock::time_point> kill_at;  // set once the launcher stops the workers
  Clock::time_point last_sample{};
  auto stop_all = [&](int signal) {
    for (auto& w : workers)
      if (!w.reaped) {
        w.outcome.stopped = true;
        stop_group(w, signal);
      }
    if (!kill_at) kill_at = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(plan.stop_timeout_s));
  };

  for (;;) {
    std::vector<pollfd> fds;
    std::vector<Stream*> streams;
    fds.push_back({g_signal_pipe[0], POLLIN, 0});
    for (auto& w : workers)
      for (Stream* s : {&w.out, &w.err})
        if (s->fd >= 0) {
          fds.push_back({s->fd, POLLIN, 0});
          streams.push_back(s);
        }
    bool all_reaped = true;
    for (const auto& w : workers) all_reaped = all_reaped && w.reaped;
    if (all_reaped && streams.empty()) break;

    const int ready = poll(fds.data(), fds.size(), 10);
    if (ready < 0 && errno != EINTR) break;
    if (ready > 0) {
      if (fds[0].revents & POLLIN) {
        char byte;
        int interrupt = 0;
        while (read(g_signal_pipe[0], &byte, 1) == 1)
          if (byte != 0) interrupt = byte;
        if (interrupt != 0) {
          result.interrupted_by = interrupt;
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

    std::vector<int> live;
    for (auto& w : workers) {
      if (w.reaped) continue;
      int status = 0;
      const pid_t done = waitpid(w.outcome.pid, &status, WNOHANG);
      if (done == w.outcome.pid) {
        w.reaped = true;
        if (WIFEXITED(status)) w.outcome.exit_code = WEXITSTATUS(status);
        else if (WIFSIGNALED(status)) w.outcome.signal = WTERMSIG(status);
        if (w.outcome.failed() && (!w.outcome.stopped || w.outcome.signal == 0)) {
          failures.push_back(static_cast<int>(&w - workers.data()));
          if (!kill_at) stop_all(SIGTERM);
        }
        // What it started (sh -c ... &) must not outlive it holding our pipes open.
        kill(-w.outcome.pid, SIGKILL);
      } else {
        live.push_back(w.outcome.pid);
      }
    }
    // About every 10 ms, however busy the pipes are (nvitop samples NVML the same way).
    if (!live.empty() && sample && Clock::now() - last_sample >= std::chrono::milliseconds(10)) {
      last_sample = Clock::now();
      sample(live);
    }
    if (kill_at && Clock::now() >= *kill_at)
      for (auto& w : workers) stop_group(w, SIGKILL);
    // Every worker reaped but a pipe still open (a grandchild escaped the group): give up on it.
    if (live.empty() && kill_at && Clock::now() >= *kill_at + std::chrono::seconds(1))
      for (auto& w : workers) w.out.finish(), w.err.finish();
  }
  for (auto& w : workers) {
    w.out.finish();
    w.err.finish();
    result.workers.push_back(w.outcome);
  }
  // The root cause, as torchrun finds it: the earliest error a worker recorded in its error
  // file (even if it was stopped while exiting), leaving out collectives broken by a peer;
  // failing that, the first worker that ended with an error.
  long long earliest = 0;
  for (std::size_t i = 0; i < workers.size(); ++i) {
    const auto recorded = recorded_error_time(error_file(workers[i].outcome.spec.rank));
    if (recorded && (result.first_failure < 0 || *recorded < earliest)) {
      result.first_failure = static_cast<int>(i);
      earliest = *recorded;
    }
  }
  if (result.first_failure < 0 && !failures.empty() && result.interrupted_by == 0) result.first_failure = failures.front();
  cleanup();
  if (result.first_failure >= 0) {
    // A root cause stopped by us while it was exiting had recorded its error: it failed (1).
    const WorkerOutcome& root = result.workers[static_cast<std::size_t>(result.first_failure)];
    result.exit_code = root.stopped && root.signal != 0 ? 1 : root.status();
  }
  else if (result.interrupted_by != 0) result.exit_code = 128 + result.interrupted_by;
  return result;
}

}  // namespace gpulab
