// The table `gpulab launch` ends with: each worker, how it ended, the physical GPUs it was
// seen using, and who failed first.
#pragma once

#include <string>

#include "report/launch_summary.h"

namespace gpulab::view {

std::string render_launch_table(const LaunchSummary& summary);

}  // namespace gpulab::view
