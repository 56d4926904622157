// A private temporary folder that lives as long as its owner: reports, scratch files.
#pragma once

#include <string>

namespace gpulab {

class TempDir {
 public:
  /// Makes <in>/<prefix>-XXXXXX (`in` empty: the temporary folder). Throws
  /// std::runtime_error when it cannot.
  explicit TempDir(const std::string& prefix, const std::string& in = "");
  ~TempDir();  ///< removes it and everything in it
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  /// <path>/<name>, with whatever was there before removed.
  std::string fresh(const std::string& name) const;

 private:
  std::string path_;
};

}  // namespace gpulab
