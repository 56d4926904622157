// Precompiled once, reused by every lesson, solution and test (see cmake/GpulabLessons.cmake).
#pragma once

#include <torch/torch.h>
// Instantiated once in libgpulab, not in each program (cmake/GpulabTorchInstances.cmake).
#include "gpulab/torch_instances.h"

#include <iostream>
#include <string>
#include <vector>

#include "gpulab/cuda.h"
#include "gpulab/data_parallel.h"
#include "gpulab/lesson.h"
