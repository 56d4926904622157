// The checks' verdict as `gpulab check` and the tutor print it.
#pragma once

#include <string>

#include "report/verdict.h"

namespace gpulab::view {

/// One line per check (✓, ✗, or - skipped), each failure indented below with its context.
std::string render_verdict(const CheckVerdict& verdict);

}  // namespace gpulab::view
