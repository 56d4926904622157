// A class's students' names (grading/class_names.h).
#include "grading/class_names.h"

#include <filesystem>
#include <set>
#include <system_error>

#include <fmt/format.h>

namespace fs = std::filesystem;

namespace gpulab::grading {
namespace {

constexpr std::size_t kMaxName = 64;  // characters; a suffix "-N" still fits a file name

bool kept_in_name(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.'; }

// The folder's own name as the file system has it (any bytes).
std::string tree_folder_name(const std::string& tree) {
  fs::path path = fs::path(tree).lexically_normal();
  if (!path.has_filename() && path.has_parent_path()) path = path.parent_path();  // "class/alice/"
  std::string name = path.filename().string();
  if (name.empty() || name == "." || name == "..") {
    std::error_code error;
    const fs::path absolute = fs::absolute(tree, error);
    if (!error) name = fs::weakly_canonical(absolute, error).filename().string();
    if (error) name.clear();
  }
  return name;
}

}  // namespace

std::string student_name(const std::string& tree) {
  const std::string folder = tree_folder_name(tree);
  std::string name;
  for (std::size_t i = 0; i < folder.size() && name.size() < kMaxName; ++i) {
    const auto c = static_cast<unsigned char>(folder[i]);
    if (kept_in_name(c)) {
      name += (name.empty() && c == '.') ? '_' : static_cast<char>(c);
      continue;
    }
    name += '_';
    // One '_' for a whole UTF-8 character: skip its continuation bytes.
    const int continuations = c >= 0xF0 && c <= 0xF4 ? 3 : c >= 0xE0 && c <= 0xEF ? 2 : c >= 0xC2 && c <= 0xDF ? 1 : 0;
    for (int k = 0; k < continuations && i + 1 < folder.size() && (static_cast<unsigned char>(folder[i + 1]) & 0xC0) == 0x80; ++k)
      ++i;
  }
  return name.empty() ? "student" : name;
}

std::vector<std::string> unique_names(const std::vector<std::string>& names) {
  const std::set<std::string> folders(names.begin(), names.end());
  std::set<std::string> used;
  std::vector<std::string> unique;
  for (const auto& name : names) {
    std::string chosen = name;
    for (int n = 2; used.count(chosen) > 0 || (chosen != name && folders.count(chosen) > 0); ++n)
      chosen = fmt::format("{}-{}", name, n);
    used.insert(chosen);
    unique.push_back(chosen);
  }
  return unique;
}

std::vector<std::string> student_names(const std::vector<std::string>& trees) {
  std::vector<std::string> names = {kClassSummary};  // taken: a student called so is a second one
  for (const auto& tree : trees) names.push_back(student_name(tree));
  auto unique = unique_names(names);
  unique.erase(unique.begin());
  return unique;
}

}  // namespace gpulab::grading
