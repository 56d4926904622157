#include "proc/temp_dir.h"

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>

namespace fs = std::filesystem;

namespace gpulab {

TempDir::TempDir(const std::string& prefix, const std::string& in) {
  std::string pattern = ((in.empty() ? fs::temp_directory_path() : fs::path(in)) / (prefix + "-XXXXXX")).string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("cannot make a temporary folder for " + prefix);
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

std::string TempDir::fresh(const std::string& name) const {
  const std::string path = path_ + "/" + name;
  std::error_code ignored;
  fs::remove_all(path, ignored);
  return path;
}

}  // namespace gpulab
