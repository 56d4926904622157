// Helpers for lessons with worker processes: fork a worker that runs a piece of the lesson,
// wait for it, and bring what it saw back into the lesson's report, so that a lesson's own
// code stays the GPU idea (when CUDA starts, which GPU each worker uses), not pipes and
// waitpid.
#pragma once

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <c10/util/Exception.h>

#include "gpulab/lesson.h"
#include "gpulab/observe.h"

namespace gpulab {

/// What one worker process reported to its parent when it ended.
struct WorkerReport {
  int worker = 0;         ///< its number: 0 for the first one forked
  int pid = 0;            ///< its process id
  bool finished = false;  ///< its body ran to its end without an exception
  std::string error;      ///< the exception's message when it did not; empty otherwise
  /// The physical GPUs (nvidia-smi's indices) whose process table listed the worker's own
  /// pid (memory or a context) when its body ended: where nvidia-smi saw it work.
  std::vector<int> gpus;
  std::vector<std::pair<std::string, std::string>> facts;  ///< what it said with Worker::fact
};

/// A worker process's side: its number, and facts it hands back to the lesson's report.
class Worker {
 public:
  /// Worker number `number` (0 for the first one forked).
  explicit Worker(int number) : number_(number) {}
  /// Its number: 0 for the first worker forked, 1 for the next...
  int number() const { return number_; }
  /// A fact for the lesson's report, as `workerN_<key>`.
  void fact(const std::string& key, const std::string& value) { facts_.emplace_back(key, value); }
  /// A number fact for the lesson's report, as `workerN_<key>`.
  void fact(const std::string& key, std::int64_t value) { fact(key, std::to_string(value)); }
  /// The facts said so far.
  const std::vector<std::pair<std::string, std::string>>& facts() const { return facts_; }

 private:
  int number_;
  std::vector<std::pair<std::string, std::string>> facts_;
};

/// Worker processes started with fork(), as a data-loading or inference pool starts them:
/// each is a copy of this process at the moment of fork(), CUDA's state included, with the
/// same environment (CUDA_VISIBLE_DEVICES too). Each worker runs its body and ends there; its
/// parent collects what it reported with join().
///
///     gpulab::WorkerPool pool(lesson);
///     for (int w = 0; w < 3; ++w) pool.fork([&](gpulab::Worker& worker) { ... GPU work ... });
///     pool.join();  // facts worker0_finished, worker0_gpus, worker0_error, ... workers_failed
class WorkerPool {
 public:
  /// Workers whose reports go to `lesson`.
  explicit WorkerPool(Lesson& lesson) : lesson_(lesson) {}
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  /// Waits for any worker not joined yet.
  ~WorkerPool() {
    try {
      join();
    } catch (...) {
    }
  }

  /// Forks worker number size() now. The child runs `body` and ends (quick_exit, so the
  /// parent's static objects are not destroyed twice); it never returns here. An exception
  /// in the body ends that worker only, reported as its error. Returns the child's pid;
  /// throws std::runtime_error when fork() fails.
  int fork(const std::function<void(Worker&)>& body) {
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error("gpulab: cannot create a pipe for a worker");
    // What the parent has buffered must not be printed twice, by the child too.
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    const int number = static_cast<int>(pids_.size());
    const pid_t pid = ::fork();
    if (pid < 0) {
      close(fds[0]);
      close(fds[1]);
      throw std::runtime_error("gpulab: fork() failed for worker " + std::to_string(number));
    }
    if (pid == 0) {
      close(fds[0]);
      run_worker(number, body, fds[1]);  // never returns
    }
    close(fds[1]);
    pids_.push_back(static_cast<int>(pid));
    pipes_.push_back(fds[0]);
    return static_cast<int>(pid);
  }

  /// How many workers were forked.
  std::size_t size() const { return pids_.size(); }

  /// Waits for every worker forked and not joined yet, and records each one's report in the
  /// lesson's facts: `workerN_pid`, `workerN_finished` (1 or 0), `workerN_gpus` ("5", "5,6",
  /// or "none"), `workerN_error` (when it failed), its own facts as `workerN_<key>`, and
  /// `workers_finished` and `workers_failed` (how many of all the workers finished, and did
  /// not). Returns the new reports.
  std::vector<WorkerReport> join() {
    std::vector<WorkerReport> joined;
    for (std::size_t i = reports_.size(); i < pids_.size(); ++i) {
      WorkerReport report = read_report(static_cast<int>(i), pids_[i], pipes_[i]);
      int status = 0;
      while (waitpid(pids_[i], &status, 0) < 0 && errno == EINTR) {
      }
      if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0) && report.error.empty()) {
        report.finished = false;
        report.error = "the worker process ended without reporting (status " + std::to_string(status) + ")";
      }
      record(report);
      reports_.push_back(report);
      joined.push_back(report);
    }
    if (joined.empty() && totals_recorded_) return joined;  // nothing new since the last join
    totals_recorded_ = true;
    int finished = 0;
    for (const WorkerReport& report : reports_) finished += report.finished ? 1 : 0;
    lesson_.fact("workers_finished", finished);
    lesson_.fact("workers_failed", static_cast<std::int64_t>(reports_.size()) - finished);
    return joined;
  }

 private:
  // One "key\tvalue" line each, the value's backslashes, tabs and line breaks escaped.
  static std::string line(const std::string& key, const std::string& value) {
    std::string escaped;
    for (const char c : value) {
      if (c == '\\') escaped += "\\\\";
      else if (c == '\t') escaped += "\\t";
      else if (c == '\n') escaped += "\\n";
      else escaped += c;
    }
    return key + '\t' + escaped + '\n';
  }

  static std::string unescape(const std::string& value) {
    std::string text;
    for (std::size_t i = 0; i < value.size(); ++i) {
      if (value[i] != '\\' || i + 1 == value.size()) {
        text += value[i];
        continue;
      }
      const char next = value[++i];
      text += next == 'n' ? '\n' : next == 't' ? '\t' : next;
    }
    return text;
  }

  [[noreturn]] static void run_worker(int number, const std::function<void(Worker&)>& body, int fd) {
    Worker worker(number);
    std::string out;
    try {
      body(worker);
      out += line("finished", "1");
    } catch (const c10::Error& error) {  // PyTorch's message, as Python shows it: no C++ backtrace
      out += line("finished", "0");
      out += line("error", error.what_without_backtrace());
    } catch (const std::exception& error) {
      out += line("finished", "0");
      out += line("error", error.what());
    } catch (...) {
      out += line("finished", "0");
      out += line("error", "an exception that is not a std::exception");
    }
    try {
      // Where nvidia-smi lists this process now, before it ends and leaves the node.
      std::string gpus;
      for (const GpuView& gpu : make_observer()->gpus())
        for (const ProcessOnGpu& process : gpu.processes)
          if (process.pid == static_cast<int>(getpid()))
            gpus += (gpus.empty() ? "" : ",") + std::to_string(gpu.physical_index);
      out += line("gpus", gpus.empty() ? "none" : gpus);
    } catch (const std::exception& error) {
      out += line("gpus", std::string("unknown: ") + error.what());
    }
    for (const auto& [key, value] : worker.facts()) out += line("fact:" + key, value);
    for (std::size_t done = 0; done < out.size();) {
      const ssize_t n = write(fd, out.data() + done, out.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    close(fd);
    std::quick_exit(0);
  }

  static WorkerReport read_report(int number, int pid, int fd) {
    std::string text;
    char buffer[4096];
    for (;;) {
      const ssize_t n = read(fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      text.append(buffer, static_cast<std::size_t>(n));
    }
    close(fd);
    WorkerReport report;
    report.worker = number;
    report.pid = pid;
    std::istringstream lines(text);
    std::string entry;
    while (std::getline(lines, entry)) {
      const auto tab = entry.find('\t');
      if (tab == std::string::npos) continue;
      const std::string key = entry.substr(0, tab);
      const std::string value = unescape(entry.substr(tab + 1));
      if (key == "finished") report.finished = value == "1";
      else if (key == "error") report.error = value;
      else if (key == "gpus" && value != "none") {
        for (const std::string& gpu : split(value)) {
          try {
            report.gpus.push_back(std::stoi(gpu));
          } catch (const std::exception&) {
          }
        }
      } else if (key.rfind("fact:", 0) == 0) report.facts.emplace_back(key.substr(5), value);
    }
    return report;
  }

  void record(const WorkerReport& report) {
    const std::string prefix = "worker" + std::to_string(report.worker) + "_";
    // The worker's own facts first: what the library observed (its pid, where nvidia-smi
    // listed it) is written after them, so a worker's fact "gpus" cannot stand in for it.
    for (const auto& [key, value] : report.facts) lesson_.fact(prefix + key, value);
    lesson_.fact(prefix + "pid", report.pid);
    lesson_.fact(prefix + "finished", report.finished ? 1 : 0);
    std::string gpus;
    for (const int gpu : report.gpus) gpus += (gpus.empty() ? "" : ",") + std::to_string(gpu);
    lesson_.fact(prefix + "gpus", gpus.empty() ? "none" : gpus);
    if (!report.error.empty()) lesson_.fact(prefix + "error", report.error);
  }

  Lesson& lesson_;
  std::vector<int> pids_;
  std::vector<int> pipes_;
  std::vector<WorkerReport> reports_;
  bool totals_recorded_ = false;
};

}  // namespace gpulab
