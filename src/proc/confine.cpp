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

namespace {

// `path` is `folder` or inside it (both absolute and normal).
bool inside(const fs::path& path, const fs::path& folder) {
  const auto relative = path.lexically_relative(folder);
  return !relative.empty() && *relative.begin() != "..";
}

// The reference solutions' folder when this run must not see it: a run of a reference names
// it in its command (the program, or what a launcher or a prestarted parent starts).
std::string hidden_references(const std::vector<std::string>& argv) {
  const char* references = std::getenv(kReferenceVariable);
  if (references == nullptr || *references != '/') return "";
  const fs::path folder = fs::path(references).lexically_normal();
  std::error_code error;
  if (!fs::is_directory(folder, error)) return "";  // nothing to hide (and nowhere to mount)
  for (const auto& word : argv)
    if (!word.empty() && word.front() == '/' && inside(fs::path(word).lexically_normal(), folder)) return "";
  return folder.string();
}

}  // namespace

std::vector<std::string> confined(const std::vector<std::string>& argv, const std::vector<std::string>& writable,
                                  Lifetime lifetime) {
  const std::string area = confined_area();
  if (area.empty()) return argv;
  // No --unshare-net: a prestarted parent is reached at an abstract socket, and the launcher's
  // ranks meet on loopback; the box around it has no network of its own.
  std::vector<std::string> command = {"bwrap", "--unshare-pid", "--unshare-ipc"};
  if (lifetime == Lifetime::kStartingThread) command.push_back("--die-with-parent");
  command.insert(command.end(), {"--ro-bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc"});
  std::error_code error;
  const fs::path scratch = fs::temp_directory_path(error);
  const bool hide = !error && !scratch.empty() && !inside(scratch, area);
  if (hide) command.insert(command.end(), {"--tmpfs", scratch.string()});  // the grader's own
  const std::string references = hidden_references(argv);
  if (!references.empty()) command.insert(command.end(), {"--tmpfs", references});
  command.insert(command.end(), {"--bind", area, area});
  for (const auto& folder : writable) command.insert(command.end(), {"--bind", folder, folder});
  if (hide) command.insert(command.end(), {"--remount-ro", scratch.string()});
  if (!references.empty()) command.insert(command.end(), {"--remount-ro", references});
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
