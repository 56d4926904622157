// Warnings that gpulab's PyTorch-semantics code raises where Python would call
// warnings.warn(..., UserWarning): DataParallel's imbalance warning, gather's scalar warning.
// They are printed to stderr, and a listener (the lesson report) may record them.
#pragma once

#include <functional>
#include <string>

namespace gpulab {

/// Receives every warning's text, exactly as PyTorch words it.
using WarningListener = std::function<void(const std::string& message)>;

/// Prints "UserWarning: <message>" on stderr (Python's category and text) and passes the
/// message to the listener, if one is installed.
void warn(const std::string& message);

/// Installs `listener` for this process (an empty one removes it); returns the previous one.
WarningListener set_warning_listener(WarningListener listener);

}  // namespace gpulab
