// What every backend provides, torch-free: the simulated node (backend/sim) or real CUDA
// (backend/cuda). Exactly one backend is linked into a build; code outside src/backend asks
// it through these functions and never includes a backend's own headers.
#pragma once

#include "model/profile.h"

namespace gpulab {

/// The profile of this process: on the simulated node the simulator's (the linked LibTorch,
/// GPULAB_CUDA_BUILD read once with CUDA_VISIBLE_DEVICES); on real GPUs the linked
/// LibTorch and the CUDA its libtorch_cuda.so was built with.
Profile active_profile();

/// True while this process has not started CUDA, so a fork of it starts CUDA afresh and
/// reads its own environment then (a prestarted lesson's runs, proc/prestart.h). The real
/// backend says false: forking it is untried on real GPUs, where lessons start afresh.
bool cuda_not_started();

/// The calling thread's current CUDA device, as CUDA itself holds it, once this process has
/// started CUDA (never starting it); -1 before that, and on real GPUs, where asking could
/// start it. Lesson::observe records it, so a check need not take the program's word.
int current_device_if_started();

}  // namespace gpulab
