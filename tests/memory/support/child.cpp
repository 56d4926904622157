#include "child.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace gpulab::test {
namespace {

std::vector<std::string> environment(const std::string& state_dir, const Env& env) {
  std::map<std::string, std::string> vars;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text = *entry;
    const auto equals = text.find('=');
    if (equals != std::string::npos) vars[text.substr(0, equals)] = text.substr(equals + 1);
  }
  Env changes = {{"CUDA_VISIBLE_DEVICES", std::nullopt},
                 {"CUDA_DEVICE_ORDER", std::nullopt},
                 {"GPULAB_NODE", std::nullopt},
                 {"GPULAB_STATE_DIR", state_dir}};
  changes.insert(changes.end(), env.begin(), env.end());
  for (const auto& [name, value] : changes) {
    if (value) vars[name] = *value;
    else vars.erase(name);
  }
  std::vector<std::string> result;
  for (const auto& [name, value] : vars) result.push_back(name + "=" + value);
  return result;
}

}  // namespace

Child::Child(const std::vector<std::string>& argv, const std::string& state_dir, const Env& env) {
  // A test writing to a program that died must fail its checks, not die of SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  std::string pattern = state_dir + "/stderr-XXXXXX";
  const int err_fd = mkstemp(pattern.data());
  if (err_fd < 0) throw std::runtime_error("cannot create a stderr file in " + state_dir);
  err_path_ = pattern;
  int in_pipe[2];
  int out_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0 || pipe2(out_pipe, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("cannot create pipes: ") + std::strerror(errno));

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_pipe[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_fd, STDERR_FILENO);
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  const auto vars = environment(state_dir, env);
  std::vector<char*> envp;
  for (const auto& var : vars) envp.push_back(const_cast<char*>(var.c_str()));
  envp.push_back(nullptr);
  const int failed = posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_fd);
  in_ = in_pipe[1];
  out_ = out_pipe[0];
  if (failed != 0) {
    close(in_);
    close(out_);
    throw std::runtime_error("cannot start '" + argv[0] + "': " + std::strerror(failed));
  }
}

Child::~Child() {
  if (!reaped_) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (in_ >= 0) close(in_);
  if (out_ >= 0) close(out_);
  unlink(err_path_.c_str());
}

std::string Child::read_line(double limit_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  while (true) {
    const auto newline = buffer_.find('\n');
    if (newline != std::string::npos) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return line;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    INFO("program " << pid_ << " printed so far: '" << buffer_ << "'\nstderr:\n" << err());
    if (left.count() <= 0) FAIL("the program printed no line within " << limit_s << " s");
    pollfd fd{out_, POLLIN, 0};
    if (poll(&fd, 1, static_cast<int>(left.count())) <= 0) continue;
    char chunk[4096];
    const ssize_t n = read(out_, chunk, sizeof chunk);
    if (n > 0) buffer_.append(chunk, static_cast<std::size_t>(n));
    else if (n == 0) FAIL("the program closed its output before printing a whole line");
    else if (errno != EINTR) FAIL("cannot read the program's output: " << std::strerror(errno));
  }
}

void Child::write_line(const std::string& line) {
  const std::string text = line + "\n";
  INFO("program " << pid_ << " stderr:\n" << err());
  REQUIRE(write(in_, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
}

void Child::close_stdin() {
  if (in_ >= 0) close(in_);
  in_ = -1;
}

void Child::kill_and_wait(bool reap) {
  REQUIRE(kill(pid_, SIGKILL) == 0);
  if (reap) {
    int status = 0;
    REQUIRE(waitpid(pid_, &status, 0) == pid_);
    reaped_ = true;
    CHECK(WIFSIGNALED(status));
  } else {
    siginfo_t info{};
    REQUIRE(waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT) == 0);  // ended, left a zombie
  }
}

ProcessResult Child::wait(double limit_s) {
  ProcessResult result;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  int status = 0;
  // Drain stdout while waiting, so that a chatty program cannot block on a full pipe.
  while (waitpid(pid_, &status, WNOHANG) != pid_) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      result.timed_out = true;
      break;
    }
    pollfd fd{out_, POLLIN, 0};
    if (poll(&fd, out_ >= 0 ? 1 : 0, 50) <= 0 || out_ < 0) continue;
    char chunk[4096];
    const ssize_t n = read(out_, chunk, sizeof chunk);
    if (n > 0) {
      buffer_.append(chunk, static_cast<std::size_t>(n));
    } else if (n == 0) {
      close(out_);
      out_ = -1;
    }
  }
  reaped_ = true;
  if (out_ >= 0) {
    char chunk[4096];
    for (ssize_t n; (n = read(out_, chunk, sizeof chunk)) > 0;) buffer_.append(chunk, static_cast<std::size_t>(n));
  }
  if (WIFEXITED(status) && !result.timed_out) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status) && !result.timed_out) result.signal = WTERMSIG(status);
  result.out = std::move(buffer_);
  buffer_.clear();
  result.err = err();
  return result;
}

std::string Child::err() const {
  std::ifstream file(err_path_);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace gpulab::test
