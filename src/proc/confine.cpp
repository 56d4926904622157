#include "proc/confine.h"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace fs = std::filesystem;

namespace gpulab {

std::string confined_area() {
  const char* area = std::getenv(kConfineVariable);
  return area != nullptr ? area : "";
}

std::string fresh_run_folder(const std::string& prefix) {
  const std::string area = confined_area();
  std::string pattern = ((area.empty() ? fs::temp_directory_path() : fs::path(area)) / (prefix + "-XXXXXX")).string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("cannot make a folder in " + pattern);
  return pattern;
}

std::vector<std::string> confined(const std::vector<std::string>& argv) {
  const std::string area = confined_area();
  if (area.empty()) return argv;
  // No --unshare-net: a prestarted parent is reached at an abstract socket, and the launcher's
  // ranks meet on loopback; the box around it has no network of its own.
  std::vector<std::string> command = {"bwrap", "--unshare-pid", "--unshare-ipc", "--die-with-parent", "--ro-bind", "/", "/",
                                      "--dev-bind", "/dev", "/dev", "--proc", "/proc"};
  std::error_code error;
  const fs::path scratch = fs::temp_directory_path(error);
  const auto relative = scratch.lexically_relative(area);
  const bool hide = !error && !scratch.empty() && (relative.empty() || *relative.begin() == "..");
  if (hide) command.insert(command.end(), {"--tmpfs", scratch.string()});  // the grader's own
  command.insert(command.end(), {"--bind", area, area});
  if (hide) command.insert(command.end(), {"--remount-ro", scratch.string()});
  command.insert(command.end(), {"--setenv", "TMPDIR", area, "--"});
  command.insert(command.end(), argv.begin(), argv.end());
  return command;
}

void program_end_of_confined(ProcessResult& result) {
  if (confined_area().empty() || result.exit_code <= 128 || result.exit_code >= 128 + 65) return;
  result.signal = result.exit_code - 128;
  result.exit_code = -1;
}

}  // namespace gpulab
