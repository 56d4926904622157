#include <catch2/catch.hpp>

#include "in_process_environment.h"
#include "lesson_run.h"
#include "parallel_support.h"

namespace gpulab::test {

CATCH_REGISTER_LISTENER(InProcessEnvironment)

}  // namespace gpulab::test
