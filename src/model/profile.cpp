// The software profile (model/profile.h). Sources for each rule: docs/reference.md,
// "Profiles".
#include "model/profile.h"

#include <cctype>
#include <cstring>
#include <stdexcept>

namespace gpulab {

std::string Profile::torch_version() const {
  return std::to_string(torch_major) + "." + std::to_string(torch_minor) + "." + std::to_string(torch_patch);
}

bool Profile::torch_at_least(int major, int minor) const {
  return torch_major > major || (torch_major == major && torch_minor >= minor);
}

OomTextForm Profile::oom_text_form() const {
  if (!torch_at_least(2, 1)) return OomTextForm::Torch113;
  if (!torch_at_least(2, 2)) return OomTextForm::Torch21;
  if (!torch_at_least(2, 11)) return OomTextForm::Torch22;
  return OomTextForm::Torch211;
}

CudaErrorSuffixForm Profile::cuda_error_suffix_form() const {
  if (torch_major < 2) return CudaErrorSuffixForm::Torch1;
  if (!torch_at_least(2, 1)) return CudaErrorSuffixForm::Torch20;
  return CudaErrorSuffixForm::Torch21;
}

int official_cuda_runtime(int torch_major, int torch_minor) {
  return torch_major > 2 || (torch_major == 2 && torch_minor >= 1) ? 12 : 11;
}

std::optional<int> parse_cuda_runtime(const char* value) {
  if (value == nullptr) return std::nullopt;
  if (std::strcmp(value, "11") == 0) return 11;
  if (std::strcmp(value, "12") == 0) return 12;
  throw std::invalid_argument(std::string("GPULAB_CUDA_RUNTIME must be 11 or 12 (the CUDA runtime to simulate), got '") +
                              value + "'");
}

Profile make_profile(int torch_major, int torch_minor, int torch_patch, const char* cuda_runtime_override) {
  Profile profile;
  profile.torch_major = torch_major;
  profile.torch_minor = torch_minor;
  profile.torch_patch = torch_patch;
  profile.cuda_runtime = parse_cuda_runtime(cuda_runtime_override).value_or(official_cuda_runtime(torch_major, torch_minor));
  return profile;
}

std::optional<Profile> parse_torch_version(const std::string& text) {
  int numbers[3] = {0, 0, 0};
  std::size_t i = 0;
  for (int part = 0; part < 3; ++part) {
    const std::size_t start = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && i - start < 4)
      numbers[part] = numbers[part] * 10 + (text[i++] - '0');
    if (i == start) {
      if (part < 2) return std::nullopt;
      break;
    }
    if (part < 2) {
      if (i >= text.size() || text[i] != '.') {
        if (part == 1) break;
        return std::nullopt;
      }
      ++i;
    }
  }
  Profile profile;
  profile.torch_major = numbers[0];
  profile.torch_minor = numbers[1];
  profile.torch_patch = numbers[2];
  return profile;
}

}  // namespace gpulab
