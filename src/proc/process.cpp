#include "proc/process.h"
#include "proc/supervise.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <stdexcept>

#include <fcntl.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace gpulab {
namespace {

void set_environment(const ProcessOptions& options) {
  if (options.clear_env) clearenv();
  for (const auto& [name, value] : options.env) {
    if (value) setenv(name.c_str(), value->c_str(), 1);
    else unsetenv(name.c_str());
  }
}

[[noreturn]] void exec_child(const ProcessOptions& options, int out_fd, int err_fd) {
  setpgid(0, 0);  // its own process group, so a time-out stops its children too
  if (out_fd >= 0) dup2(out_fd, STDOUT_FILENO);
  if (err_fd >= 0) dup2(err_fd, STDERR_FILENO);
  if (options.pass_fd == 3) fcntl(3, F_SETFD, 0);
  else if (options.pass_fd >= 0 && dup2(options.pass_fd, 3) != 3) _exit(126);
  close_descriptors_from(options.pass_fd >= 0 ? 4 : 3);
  set_environment(options);
  if (!options.working_directory.empty() && chdir(options.working_directory.c_str()) != 0) _exit(126);
  std::vector<char*> args;
  for (const auto& arg : options.argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  execvp(args[0], args.data());
  const std::string message = "cannot run '" + options.argv[0] + "': " + std::strerror(errno) + "\n";
  (void)!write(STDERR_FILENO, message.data(), message.size());
  _exit(127);
}

}  // namespace

void close_descriptors_from(int first) {
  if (syscall(SYS_close_range, static_cast<unsigned>(first), ~0u, 0) == 0) return;
  // A kernel older than 5.9: every number up to the limit.
  for (long fd = first, last = sysconf(_SC_OPEN_MAX); fd < last; ++fd) close(static_cast<int>(fd));
}

std::string ProcessResult::outcome(double timeout_s) const {
  if (timed_out) {
    char limit[32];
    std::snprintf(limit, sizeof limit, "%g", timeout_s);
    return std::string("did not finish within ") + limit + " s and was stopped";
  }
  if (signal != 0) {
    const char* name = sigabbrev_np(signal);
    return std::string("crashed with SIG") + (name != nullptr ? name : "?") + " (signal " + std::to_string(signal) + ")";
  }
  return "exited with code " + std::to_string(exit_code);
}

ProcessResult run_process(const ProcessOptions& options) {
  if (options.argv.empty()) throw std::runtime_error("run_process: no program given");
  Pipes pipes = make_pipes(options.capture);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("cannot fork: ") + std::strerror(errno));
  if (pid == 0) exec_child(options, pipes.out[1], pipes.err[1]);
  setpgid(pid, pid);
  return supervise(pid, pipes, options, [pid](bool block, int& status) {
    return waitpid(pid, &status, block ? 0 : WNOHANG) == pid;
  });
}

Pipes make_pipes(bool capture) {
  Pipes pipes;
  if (capture && (pipe2(pipes.out, O_CLOEXEC) != 0 || pipe2(pipes.err, O_CLOEXEC) != 0)) {
    const std::string reason = std::strerror(errno);
    for (const int fd : {pipes.out[0], pipes.out[1], pipes.err[0], pipes.err[1]})
      if (fd >= 0) close(fd);
    throw std::runtime_error("cannot create pipes: " + reason);
  }
  return pipes;
}

ProcessResult supervise(pid_t pid, Pipes& pipes, const ProcessOptions& options,
                        const std::function<bool(bool block, int& status)>& reap) {
  ProcessResult result;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(options.timeout_s);
  if (options.capture) {
    close(pipes.out[1]);
    close(pipes.err[1]);
  }
  int status = 0;
  bool exited = false;
  std::vector<pollfd> fds;
  if (options.capture) fds = {{pipes.out[0], POLLIN, 0}, {pipes.err[0], POLLIN, 0}};
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      kill(-pid, SIGKILL);
      break;
    }
    bool open_pipes = false;
    for (const auto& fd : fds) open_pipes = open_pipes || fd.fd >= 0;
    if (open_pipes) {
      for (auto& fd : fds) fd.revents = 0;  // poll may fail (EINTR) and leave them stale
      poll(fds.data(), fds.size(), static_cast<int>(std::min<long long>(left.count(), 100)));
      for (std::size_t i = 0; i < fds.size(); ++i) {
        if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP)) == 0) continue;
        char buffer[65536];
        const ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
        if (n > 0) (i == 0 ? result.out : result.err).append(buffer, static_cast<std::size_t>(n));
        else if (n == 0 || errno != EINTR) {
          close(fds[i].fd);
          fds[i].fd = -1;
        }
      }
    } else {
      usleep(5000);
    }
    if (!exited && reap(false, status)) exited = true;
    bool still_open = false;
    for (const auto& fd : fds) still_open = still_open || fd.fd >= 0;
    if (exited && !still_open) break;
    if (exited && still_open) {
      // The program ended but a child of it holds the pipe: drain what is there, then stop.
      kill(-pid, SIGKILL);
    }
  }
  for (const auto& fd : fds)
    if (fd.fd >= 0) close(fd.fd);
  if (!exited) reap(true, status);
  if (WIFEXITED(status) && !result.timed_out) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status) && !result.timed_out) result.signal = WTERMSIG(status);
  return result;
}

}  // namespace gpulab
