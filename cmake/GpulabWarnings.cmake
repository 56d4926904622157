# Strict warnings for gpulab's own code; -Werror in CI (GPULAB_WERROR=ON).
function(gpulab_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                           -Wold-style-cast -Wcast-align)
  if(GPULAB_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# Lesson-sized programs are rebuilt after every edit: compile them without optimisation
# (the work runs inside LibTorch, which is optimised anyway) and with the shared
# precompiled header. Measured in bench/: ~5 s instead of ~25 s per edit.
function(gpulab_quick_rebuild target)
  target_compile_options(${target} PRIVATE -O0)
  if(NOT target STREQUAL "gpulab_pch")
    target_precompile_headers(${target} REUSE_FROM gpulab_pch)
  endif()
endfunction()
