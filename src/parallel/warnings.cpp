// gpulab::warn: Python's warnings.warn(message) for gpulab's PyTorch-semantics code.
#include "gpulab/warnings.h"

#include <iostream>
#include <mutex>
#include <utility>

namespace gpulab {
namespace {

std::mutex& listener_mutex() {
  static std::mutex mutex;
  return mutex;
}

WarningListener& listener() {
  static WarningListener current;
  return current;
}

}  // namespace

void warn(const std::string& message) {
  WarningListener current;
  {
    const std::lock_guard<std::mutex> lock(listener_mutex());
    current = listener();
  }
  std::cerr << "UserWarning: " << message << '\n' << std::flush;
  if (current) current(message);
}

WarningListener set_warning_listener(WarningListener next) {
  const std::lock_guard<std::mutex> lock(listener_mutex());
  return std::exchange(listener(), std::move(next));
}

}  // namespace gpulab
