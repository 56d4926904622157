#include "proc/text_file.h"

#include <fstream>
#include <sstream>

namespace gpulab {

std::string read_text_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream all;
  all << in.rdbuf();
  return all.str();
}

}  // namespace gpulab
