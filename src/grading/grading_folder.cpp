// A student's checkout is graded in a folder of its own, named after it; only the student's
// programs are built there (grading.cpp, with this build's recipes).
#include "grading/grading_folder.h"

#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>

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

}  // namespace gpulab::grading
