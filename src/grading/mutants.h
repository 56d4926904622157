// Mutation tests through the one runner: every known wrong answer (tests/mutations/lessonNN/
// *.patch, a diff against the lesson's solution) is compiled as a program of this build
// (mutant-NN-<name>, cmake/GpulabMutants.cmake) and must fail its lesson's checks.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "course/manifest.h"

namespace gpulab::grading {

struct MutantsOptions {
  std::vector<std::string> lessons;  ///< ids; empty: every lesson with a lessonNN folder of patches
  std::string patches;               ///< the folder of lessonNN/*.patch; empty: tests/mutations (tests/variants)
  /// true: the patches are valid variants, other right answers, which must pass
  /// (variant-NN-<name>, "passes" or REJECTED); false: known wrong answers, which must fail.
  bool variants = false;
  unsigned jobs = 1;                 ///< lessons graded at once, each in a gpulab process of its own
  bool build = true;                 ///< false: the mutant programs are built already (a job's child)
  double timeout_s = 120;            ///< per mutant, for its checks
};

/// One line per mutant to `out`: "caught", or SURVIVED / STALE / BROKEN / NO MUTANTS with
/// why, then a count (variants: "passes", or REJECTED / STALE / BROKEN / NO VARIANTS).
/// Returns how many were not judged as their kind must be (0: all were).
std::size_t grade_mutants(const Manifest& manifest, const MutantsOptions& options, std::ostream& out);

}  // namespace gpulab::grading
