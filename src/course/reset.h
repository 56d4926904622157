// Putting a lesson's exercise back as shipped, never losing the learner's file.
#pragma once

#include <ostream>
#include <string>

#include "course/manifest.h"

namespace gpulab {

/// Backs up lesson `id`'s exercise to .gpulab-backups/ (and says where on `out`), then
/// writes it as git's HEAD has it. Throws Failure(kUsage) with the reason when it cannot:
/// then the learner's file is unchanged.
void reset_lesson(const Manifest& manifest, const std::string& id, std::ostream& out);

}  // namespace gpulab
