// A student's checkout is graded in a build folder of its own: this repository, with the
// lesson-NN programs built from the student's lessons/*/main.cpp (cmake/GpulabLessons.cmake,
// GPULAB_EXERCISE_ROOT), and the same generator and settings as this build, so ccache serves
// everything but their files.
#include "grading/grading_folder.h"

#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "proc/process.h"
#include "proc/temp_dir.h"
#include "report/outcome.h"
#include "report/message_text.h"

namespace fs = std::filesystem;

namespace gpulab::grading {

std::map<std::string, std::string> read_build_cache(const std::string& build) {
  std::map<std::string, std::string> cache;
  std::ifstream in(build + "/CMakeCache.txt");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line[0] == '/') continue;
    const auto colon = line.find(':');
    const auto equals = line.find('=');
    if (colon == std::string::npos || equals == std::string::npos || colon > equals) continue;
    cache[line.substr(0, colon)] = line.substr(equals + 1);
  }
  return cache;
}

// "the_class-3f2a91c4": a student folder's name, readable and unique per path.
std::string folder_name(const std::string& root) {
  std::string name = fs::path(root).filename().string();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  std::uint32_t hash = 2166136261u;  // FNV-1a: the same folder for the same path, every run
  for (const unsigned char c : root) hash = (hash ^ c) * 16777619u;
  return fmt::format("{}-{:08x}", name.empty() ? "root" : name, hash);
}

// `present`: the lessons whose file the student has (CMake defines lesson-NN for those only),
// kept in a stamp file so that a file added since the last grading is configured in.
void configure_grading_folder(const std::string& main_build, const std::string& folder, const std::string& root,
                              const std::string& present) {
  const auto existing = read_build_cache(folder);
  const auto found = existing.find("GPULAB_EXERCISE_ROOT");
  const std::string stamp = folder + "/.gpulab-grading-lessons";
  if (found != existing.end() && found->second == root && fs::exists(folder + "/build.ninja") && read_text_file(stamp) == present)
    return;
  const auto cache = read_build_cache(main_build);
  std::vector<std::string> args = {"cmake", "-S", cache.count("CMAKE_HOME_DIRECTORY") ? cache.at("CMAKE_HOME_DIRECTORY") : "",
                                   "-B", folder};
  if (cache.count("CMAKE_GENERATOR")) args.insert(args.end(), {"-G", cache.at("CMAKE_GENERATOR")});
  for (const char* key : {"CMAKE_BUILD_TYPE", "CMAKE_CXX_COMPILER", "CMAKE_CXX_FLAGS", "CMAKE_CXX_FLAGS_DEBUG",
                          "CMAKE_CXX_FLAGS_RELWITHDEBINFO", "CMAKE_PREFIX_PATH", "GPULAB_BACKEND",
                          "GPULAB_WERROR", "GPULAB_SANITIZE", "LIBTORCH_PREFIX"}) {
    const auto value = cache.find(key);
    if (value != cache.end() && !value->second.empty()) args.push_back(fmt::format("-D{}={}", key, value->second));
  }
  args.push_back("-DGPULAB_BUILD_TESTS=ON");
  args.push_back("-DGPULAB_EXERCISE_ROOT=" + root);
  ProcessOptions options;
  options.argv = args;
  options.timeout_s = 3600;
  const ProcessResult result = run_process(options);
  if (!result.ok())
    throw Failure(Outcome::kBuildFailed, fmt::format("configuring the grading build folder {} failed ({}):\n{}{}", folder,
                                                     result.outcome(options.timeout_s), first_lines(result.out, 60),
                                                     first_lines(result.err, 60)));
  std::ofstream(stamp) << present;
}

}  // namespace gpulab::grading
