// The software profile (model/profile.h). Sources for each rule: docs/reference.md,
// "Profiles", and tests/fixtures/torch-facts/README.md.
#include "model/profile.h"

#include <cctype>
#include <cstring>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace gpulab {

std::string CudaVersion::text() const { return std::to_string(major) + "." + std::to_string(minor); }

std::string Profile::torch_version() const {
  return std::to_string(torch_major) + "." + std::to_string(torch_minor) + "." + std::to_string(torch_patch);
}

std::string Profile::name() const { return "PyTorch " + torch_version() + " (CUDA " + cuda.text() + " build)"; }

bool Profile::torch_at_least(int major, int minor) const {
  return torch_major > major || (torch_major == major && torch_minor >= minor);
}

OomTextForm Profile::oom_text_form() const {
  if (!torch_at_least(2, 1)) return OomTextForm::A;
  if (!torch_at_least(2, 2)) return OomTextForm::B;
  if (!torch_at_least(2, 10)) return OomTextForm::C;
  if (!torch_at_least(2, 11)) return OomTextForm::D;
  return OomTextForm::E;
}

CudaErrorSuffixForm Profile::cuda_error_suffix_form() const {
  if (torch_major < 2) return CudaErrorSuffixForm::NoSpace;
  if (!torch_at_least(2, 4)) return CudaErrorSuffixForm::FullStop;
  return CudaErrorSuffixForm::NoFullStop;
}

bool Profile::cuda_error_async_suffix_for(int code) const {
  if (!torch_at_least(2, kDsaLineGoneMinor)) return true;
  return code == 700 || code == 710 || code == 715 || code == 716 || code == 719;
}

const std::vector<ShippedRelease>& shipped_releases() {
  // RELEASE.md's "Release Compatibility Matrix" (CUDA columns, stable and experimental)
  // and each release's PyPI wheel (torch/version.py's `cuda`), as recorded in
  // tests/fixtures/torch-facts/ (the unit tests hold this table to them). Where no copy of
  // the matrix that the fixtures were read from lists a release (2.4, 2.6, 2.12 and
  // later), only its PyPI build is known, so only that one is offered.
  static const std::vector<ShippedRelease> releases = {
      {1, 13, {{11, 6}, {11, 7}}, {11, 7}},
      {2, 0, {{11, 7}, {11, 8}}, {11, 7}},
      {2, 1, {{11, 8}, {12, 1}}, {12, 1}},
      {2, 2, {{11, 8}, {12, 1}}, {12, 1}},
      {2, 3, {{11, 8}, {12, 1}}, {12, 1}},
      {2, 4, {{12, 1}}, {12, 1}},
      {2, 5, {{11, 8}, {12, 1}, {12, 4}}, {12, 4}},
      {2, 6, {{12, 4}}, {12, 4}},
      {2, 7, {{11, 8}, {12, 6}, {12, 8}}, {12, 6}},
      {2, 8, {{12, 6}, {12, 8}, {12, 9}}, {12, 8}},
      {2, 9, {{12, 6}, {12, 8}, {13, 0}}, {12, 8}},
      {2, 10, {{12, 6}, {12, 8}, {13, 0}}, {12, 8}},
      {2, 11, {{12, 6}, {12, 8}, {13, 0}}, {13, 0}},
      {2, 12, {{13, 0}}, {13, 0}},
      {2, 13, {{13, 0}}, {13, 0}},
      {2, 14, {{13, 0}}, {13, 0}},
      {2, 15, {{13, 2}}, {13, 2}},
  };
  return releases;
}

std::optional<ShippedRelease> shipped_release(int torch_major, int torch_minor) {
  for (const ShippedRelease& release : shipped_releases())
    if (release.major == torch_major && release.minor == torch_minor) return release;
  return std::nullopt;
}

std::vector<CudaVersion> builds_per_cuda_major(const ShippedRelease& release) {
  std::vector<CudaVersion> builds{release.pypi_default};
  for (auto build = release.builds.rbegin(); build != release.builds.rend(); ++build) {
    bool seen = false;
    for (const CudaVersion& chosen : builds) seen = seen || chosen.major == build->major;
    if (!seen) builds.push_back(*build);
  }
  return builds;
}

std::optional<CudaVersion> parse_cuda_build(const char* value) {
  if (value == nullptr || *value == '\0') return std::nullopt;
  const std::string text(value);
  const auto number = [](const std::string& digits, int* out) {
    if (digits.empty() || digits.size() > 3) return false;
    for (const char c : digits)
      if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    *out = std::stoi(digits);
    return true;
  };
  CudaVersion version;
  const std::size_t dot = text.find('.');
  if (dot == std::string::npos || !number(text.substr(0, dot), &version.major) ||
      !number(text.substr(dot + 1), &version.minor))
    throw std::invalid_argument("GPULAB_CUDA_BUILD must be a CUDA version such as 12.8 (the official build to "
                                "simulate), got '" + text + "'");
  return version;
}

namespace {
std::string builds_text(const ShippedRelease& release) {
  std::string text;
  for (const CudaVersion& build : release.builds) {
    if (!text.empty()) text += ", ";
    text += build.text();
    if (build == release.pypi_default) text += " (PyPI's default)";
  }
  return text;
}
}  // namespace

Profile make_profile(int torch_major, int torch_minor, int torch_patch, const char* cuda_build_override) {
  Profile profile;
  profile.torch_major = torch_major;
  profile.torch_minor = torch_minor;
  profile.torch_patch = torch_patch;
  const std::string release_name = std::to_string(torch_major) + "." + std::to_string(torch_minor);
  const std::optional<ShippedRelease> release = shipped_release(torch_major, torch_minor);
  if (!release) {
    std::string known;
    for (const ShippedRelease& r : shipped_releases()) known += (known.empty() ? "" : ", ") + std::to_string(r.major) + "." + std::to_string(r.minor);
    throw std::invalid_argument("gpulab has no profile for PyTorch " + release_name + " (the linked LibTorch); it models " +
                                known);
  }
  profile.cuda = release->pypi_default;
  if (const std::optional<CudaVersion> wanted = parse_cuda_build(cuda_build_override)) {
    bool shipped = false;
    for (const CudaVersion& build : release->builds) shipped = shipped || build == *wanted;
    if (!shipped)
      throw std::invalid_argument("GPULAB_CUDA_BUILD=" + wanted->text() + ": PyTorch " + release_name +
                                  " never shipped a CUDA " + wanted->text() + " build; its builds are CUDA " +
                                  builds_text(*release));
    profile.cuda = *wanted;
  }
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

nlohmann::json profile_to_json(const Profile& profile) {
  return {{"torch", profile.torch_version()}, {"cuda", profile.cuda.text()}, {"name", profile.name()}};
}

std::optional<Profile> profile_from_json(const nlohmann::json& json) {
  if (!json.is_object() || !json.contains("torch") || !json.contains("cuda") || !json["torch"].is_string() ||
      !json["cuda"].is_string())
    return std::nullopt;
  std::optional<Profile> profile = parse_torch_version(json["torch"].get<std::string>());
  if (!profile) return std::nullopt;
  try {
    const std::optional<CudaVersion> cuda = parse_cuda_build(json["cuda"].get<std::string>().c_str());
    if (!cuda) return std::nullopt;
    profile->cuda = *cuda;
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
  return profile;
}

}  // namespace gpulab
