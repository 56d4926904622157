// gpulab reset NN: the exercise back as shipped (git's HEAD), the learner's file backed up
// first in .gpulab-backups/ and the backup read back before anything is overwritten.
#include "course/reset.h"

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "proc/process.h"
#include "report/outcome.h"

namespace gpulab {
namespace {

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return static_cast<bool>(out.flush());
}

std::string timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%d-%H%M%S", &local);
  return text;
}

}  // namespace

void reset_lesson(const Manifest& manifest, const std::string& id, std::ostream& out) {
  const LessonEntry& lesson = manifest.find(id);
  const std::string relative = lesson.source_file();
  const std::string file = manifest.root + "/" + relative;

  ProcessOptions git;
  git.argv = {"git", "-C", manifest.root, "show", "HEAD:" + relative};
  git.timeout_s = 30;
  ProcessResult shipped;
  try {
    shipped = run_process(git);
  } catch (const std::exception& e) {
    shipped.err = e.what();
  }
  if (!shipped.ok()) {
    throw Failure(Outcome::kUsage,
                  fmt::format("cannot find lesson {}'s exercise as shipped (git show HEAD:{} failed: {}).\n"
                              "Your file is untouched. A copy of the repository made with git clone has it.",
                              lesson.id, relative, shipped.err.empty() ? shipped.outcome(30) : shipped.err));
  }
  const auto yours = read_file(file);
  if (yours && *yours == shipped.out) {
    out << fmt::format("{} is already as shipped: nothing to reset.\n", relative);
    return;
  }
  if (yours) {
    const std::string folder = manifest.root + "/.gpulab-backups";
    std::filesystem::create_directories(folder);
    const std::string base = folder + "/" + lesson.directory() + ".main.cpp." + timestamp();
    std::string backup = base;
    for (int n = 2; std::filesystem::exists(backup); ++n) backup = base + "-" + std::to_string(n);
    if (!write_file(backup, *yours) || read_file(backup) != yours) {
      throw Failure(Outcome::kUsage, fmt::format("could not back up {} to {}; nothing was changed.", relative, backup));
    }
    out << fmt::format("Your {} is saved as {}.\n", relative, std::filesystem::relative(backup, manifest.root).string());
  }
  const std::string temporary = file + ".gpulab-reset";
  if (!write_file(temporary, shipped.out) || std::rename(temporary.c_str(), file.c_str()) != 0) {
    std::filesystem::remove(temporary);
    throw Failure(Outcome::kUsage, fmt::format("could not restore {}; your file is unchanged.", relative));
  }
  out << fmt::format("{} is as shipped again. ./gpulab run {} to see it fail the way the lesson starts.\n", relative,
                           lesson.id);
}


}  // namespace gpulab
