// Helpers for lessons with threads: the scaffolding that lets a lesson look at the node
// while worker threads are in the middle of their work, so a lesson's own code stays the
// GPU idea (which device a thread uses), not mutexes and condition variables.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "gpulab/lesson.h"

namespace gpulab {

/// Holds every worker inside its step until the main thread has looked at the node, so that
/// what an observation shows then is what the worker threads allocated themselves. A worker
/// that ends without arriving (an exception, an early return) gives up its place with
/// done(), so nothing waits forever.
///
///     gpulab::MidStep mid_step(workers);
///     // in worker w:   ... mid_step.arrive(w, model->weight); ... mid_step.done(w);
///     // main thread:   mid_step.look([&](const auto& weights) { lesson.observe("mid-step", weights); });
class MidStep {
 public:
  /// For `workers` worker threads, numbered 0 to workers - 1.
  explicit MidStep(std::size_t workers) : arrived_(workers, false), pending_(workers) {}

  /// Worker `worker`, inside its step: shows `weight` (as "worker N") and waits until seen.
  void arrive(std::size_t worker, const at::Tensor& weight) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (seen_ || arrived_.at(worker)) return;
    arrived_[worker] = true;
    weights_.emplace_back("worker " + std::to_string(worker), weight);
    --pending_;
    changed_.notify_all();
    changed_.wait(lock, [&] { return seen_; });
  }

  /// Worker `worker` is done; it may never have arrived.
  void done(std::size_t worker) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (seen_ || arrived_.at(worker)) return;
    arrived_[worker] = true;
    --pending_;
    changed_.notify_all();
  }

  /// The main thread: waits for every worker, calls `at` with the weights shown, then lets
  /// the workers finish.
  void look(const std::function<void(const std::vector<NamedTensor>&)>& at) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return pending_ == 0; });
    at(weights_);
    seen_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<bool> arrived_;
  std::size_t pending_;
  bool seen_ = false;
  std::vector<NamedTensor> weights_;
};

}  // namespace gpulab
