# Sanitizer configurations. The flags go on every target gpulab defines (add_compile_options
# before any target), so the precompiled header and the lessons that reuse it agree, and
# LibTorch — a prebuilt library — stays uninstrumented.
#
#   GPULAB_SANITIZE=ON    ASan + UBSan over everything: core, simulated backend, report
#                         library, observers, CLI, lessons, solutions, tests (docs/testing.md).
#   GPULAB_SANITIZE=core  the same flags, only the torch-free core and its unit tests.
#   GPULAB_FUZZ=ON        clang: the torch-free core with libFuzzer's coverage, ASan and
#                         UBSan, plus the harnesses in tests/fuzz/.
#
# Output: GPULAB_TORCH_FREE_ONLY, true when the build stops after the torch-free part.
set(GPULAB_TORCH_FREE_ONLY OFF)
set(_gpulab_sanitizers -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)

if(GPULAB_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "gpulab: GPULAB_FUZZ needs clang's libFuzzer (-DCMAKE_CXX_COMPILER=clang++), "
                        "not ${CMAKE_CXX_COMPILER_ID}")
  endif()
  set(GPULAB_TORCH_FREE_ONLY ON)
  add_compile_options(-fsanitize=fuzzer-no-link ${_gpulab_sanitizers})
  add_link_options(-fsanitize=address,undefined)
elseif(GPULAB_SANITIZE)
  if(GPULAB_SANITIZE STREQUAL "core")
    set(GPULAB_TORCH_FREE_ONLY ON)
  endif()
  add_compile_options(${_gpulab_sanitizers})
  add_link_options(-fsanitize=address,undefined)
endif()

# GCC's null-pointer checks make a function's address a non-constant expression, and
# LibTorch's kernel registrations (TORCH_LIBRARY_IMPL) static_assert on one
# (ATen/core/boxing/KernelFunction_impl.h). A target that registers kernels keeps the rest
# of UBSan; a null dereference there is still caught, as a SEGV, by ASan.
function(gpulab_sanitize_kernel_registrations target)
  if(GPULAB_SANITIZE AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -fno-sanitize=null,nonnull-attribute,returns-nonnull-attribute)
  endif()
endfunction()
