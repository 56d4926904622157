# Strict warnings for gpulab's own code; -Werror in CI (GPULAB_WERROR=ON).
function(gpulab_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                           -Wold-style-cast -Wcast-align)
  if(GPULAB_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# gpulab's own multi-file targets compile as a few unity files (CMake's UNITY_BUILD): their
# files share the heavy headers (nlohmann, fmt, CLI11, LibTorch), which are then parsed once
# per batch instead of once per file. Clang only (the default build's compiler): GCC reads a
# unity file's sources as headers and warns where they use their own anonymous namespaces
# (-Wsubobject-linkage), and the fuzzers build the core file by file.
function(gpulab_unity target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang" AND NOT GPULAB_FUZZ)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
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

# Every test file parses Catch2's single header and nlohmann's: precompiled once and reused.
# `gpulab_test_headers(target)`: a torch-free test program (lesson checks, unit and CLI
# tests); `gpulab_test_headers(target TORCH)`: a test suite that calls LibTorch, whose
# header also holds the lessons' (src/pch/pch.h). Each is an executable of its own so its
# header is compiled with the flags (-fPIE) of the programs that reuse it.
function(gpulab_test_headers target)
  set(_pch gpulab_test_pch)
  if(ARGN STREQUAL "TORCH")
    set(_pch gpulab_torch_test_pch)
  endif()
  if(NOT TARGET ${_pch})
    add_executable(${_pch} EXCLUDE_FROM_ALL "${PROJECT_SOURCE_DIR}/src/pch/pch.cpp")
    target_link_libraries(${_pch} PRIVATE nlohmann_json::nlohmann_json Catch2::Catch2)
    set(_headers <catch2/catch.hpp> <nlohmann/json.hpp> <map> <optional> <string> <vector>)
    if(_pch STREQUAL "gpulab_torch_test_pch")
      target_link_libraries(${_pch} PRIVATE gpulab)
      list(PREPEND _headers "${PROJECT_SOURCE_DIR}/src/pch/pch.h")
    endif()
    target_precompile_headers(${_pch} PRIVATE ${_headers})
    target_compile_options(${_pch} PRIVATE -O0)
    target_compile_definitions(${_pch} PRIVATE CATCH_CONFIG_EXTERNAL_INTERFACES)
    gpulab_warnings(${_pch})
  endif()
  target_compile_options(${target} PRIVATE -O0)
  target_precompile_headers(${target} REUSE_FROM ${_pch})
  if(ARGN STREQUAL "TORCH")
    gpulab_unity(${target})  # LibTorch's pending instantiations, once per batch
  endif()
  # Catch2's listener interface (tests/support/in_process_environment.h) must be configured
  # before catch.hpp, which the header holds: for every test program alike.
  target_compile_definitions(${target} PRIVATE CATCH_CONFIG_EXTERNAL_INTERFACES)
endfunction()
