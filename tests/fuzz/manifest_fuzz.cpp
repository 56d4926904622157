// Any text given as the lesson manifest either loads or is rejected with a ManifestError,
// and lesson lookups on a loaded manifest answer or throw ManifestError: never a crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "course/manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  gpulab::Manifest manifest;
  try {
    manifest = gpulab::parse_manifest(text, "fuzz/lessons/manifest.json");
  } catch (const gpulab::ManifestError&) {
    return 0;
  }
  if (manifest.root != "fuzz") std::abort();
  // Look every lesson up by its id, and a few ids the CLI accepts from a learner.
  for (const auto& lesson : manifest.lessons) {
    try {
      if (manifest.find(lesson.id).id != lesson.id) std::abort();
      (void)manifest.find(lesson.directory());
    } catch (const gpulab::ManifestError&) {
    }
  }
  for (const char* id : {"4", "04", "04-slug", "", "-", "x"}) {
    try {
      (void)manifest.find(id);
    } catch (const gpulab::ManifestError&) {
    }
  }
  return 0;
}
