# Finding LibTorch for gpulab, and choosing the backend (docs/libtorch-versions.md).
#
# Three kinds of LibTorch are supported:
#   * a CPU-only LibTorch (Debian's libtorch-dev 1.13, pytorch.org's "cpu" archives):
#     the wheel's own TorchConfig.cmake; only the simulated backend makes sense;
#   * a CUDA LibTorch (pip's `torch` wheel, pytorch.org's "cuXXX" archives) with
#     GPULAB_BACKEND=cuda (or auto): TorchConfig.cmake with CUDA, real GPUs;
#   * a CUDA LibTorch with GPULAB_BACKEND=sim: the simulated backend must never load
#     libtorch_cuda.so (it registers "CUDAHooks" too), so TorchConfig.cmake (which links it
#     and wants a CUDA toolkit) is bypassed: an imported target over libtorch_cpu.so and
#     libc10.so only.
#
# Inputs:  LIBTORCH_PREFIX (the folder that holds share/cmake/Torch, e.g. what
#          tools/fetch-libtorch2.sh prints; default: CMAKE_PREFIX_PATH and the system),
#          GPULAB_BACKEND (auto|sim|cuda), GPULAB_CXX_STANDARD (auto|17|20).
# Outputs: TORCH_LIBRARIES, GPULAB_TORCH_CXX_FLAGS, Torch_VERSION,
#          GPULAB_TORCH_VERSION (major.minor from the headers), GPULAB_BACKEND_RESOLVED,
#          GPULAB_NVML_INCLUDE_DIR (cuda backend), and CMAKE_CXX_STANDARD raised to what
#          the headers demand (LibTorch >= 2.14 #errors below C++20).

set(LIBTORCH_PREFIX "" CACHE PATH "LibTorch prefix (holds share/cmake/Torch); empty: search CMAKE_PREFIX_PATH and the system")
set(GPULAB_CXX_STANDARD "auto" CACHE STRING "C++ standard: auto (17, or 20 when LibTorch needs it), 17 or 20")
set_property(CACHE GPULAB_CXX_STANDARD PROPERTY STRINGS auto 17 20)
if(LIBTORCH_PREFIX)
  list(PREPEND CMAKE_PREFIX_PATH "${LIBTORCH_PREFIX}")
endif()
# A new LIBTORCH_PREFIX in an existing build tree: forget what was found for the old one.
if(DEFINED _GPULAB_LIBTORCH_PREFIX_SEEN AND NOT _GPULAB_LIBTORCH_PREFIX_SEEN STREQUAL LIBTORCH_PREFIX)
  unset(GPULAB_TORCH_CPU_LIBRARY CACHE)
  unset(Torch_DIR CACHE)
  unset(Caffe2_DIR CACHE)
endif()
set(_GPULAB_LIBTORCH_PREFIX_SEEN "${LIBTORCH_PREFIX}" CACHE INTERNAL "")

# Which LibTorch is it? A CUDA build has libtorch_cuda.so beside libtorch_cpu.so.
find_library(GPULAB_TORCH_CPU_LIBRARY torch_cpu)
if(NOT GPULAB_TORCH_CPU_LIBRARY)
  message(FATAL_ERROR "gpulab: no LibTorch found (libtorch_cpu). Install libtorch-dev (./gpulab setup), "
                      "or pass -DLIBTORCH_PREFIX=<prefix> (e.g. $(tools/fetch-libtorch2.sh)).")
endif()
get_filename_component(_gpulab_torch_libdir "${GPULAB_TORCH_CPU_LIBRARY}" DIRECTORY)
if(EXISTS "${_gpulab_torch_libdir}/libtorch_cuda.so")
  set(_gpulab_torch_has_cuda TRUE)
else()
  set(_gpulab_torch_has_cuda FALSE)
endif()

if(GPULAB_BACKEND STREQUAL "auto")
  set(GPULAB_BACKEND_RESOLVED sim)
  if(_gpulab_torch_has_cuda)
    set(GPULAB_BACKEND_RESOLVED cuda)
  endif()
else()
  set(GPULAB_BACKEND_RESOLVED "${GPULAB_BACKEND}")
endif()
if(GPULAB_BACKEND_RESOLVED STREQUAL "cuda" AND NOT _gpulab_torch_has_cuda)
  message(FATAL_ERROR "gpulab: GPULAB_BACKEND=cuda needs a CUDA build of LibTorch, but "
                      "${_gpulab_torch_libdir} has no libtorch_cuda.so (a CPU-only LibTorch). "
                      "Use GPULAB_BACKEND=sim, or point LIBTORCH_PREFIX at a CUDA LibTorch.")
endif()

# LibTorch's headers carry bundled third-party headers (fmt 12, pybind11, protobuf...)
# in the same folder as ATen/c10/torch. Seen through an overlay of symbolic links
# without them, so that gpulab's own dependencies (Debian's fmt) are the ones compiled.
function(_gpulab_torch_include_overlay prefix_include out_var)
  set(_overlay "${PROJECT_BINARY_DIR}/libtorch-include")
  file(GLOB _entries RELATIVE "${prefix_include}" "${prefix_include}/*")
  file(REMOVE_RECURSE "${_overlay}")
  file(MAKE_DIRECTORY "${_overlay}")
  foreach(_entry IN LISTS _entries)
    if(NOT _entry MATCHES "^(fmt|pybind11|google)$")
      file(CREATE_LINK "${prefix_include}/${_entry}" "${_overlay}/${_entry}" SYMBOLIC)
    endif()
  endforeach()
  set(${out_var} "${_overlay}" PARENT_SCOPE)
endfunction()

if(GPULAB_BACKEND_RESOLVED STREQUAL "sim" AND _gpulab_torch_has_cuda)
  # A CUDA LibTorch (pip wheel) seen as CPU-only: libtorch_cpu.so + libc10.so.
  # libtorch_cpu.so needs libcudart.so.13 and libcupti.so.13 (kineto); the fetch script
  # puts them beside it, where its RUNPATH ($ORIGIN) finds them.
  get_filename_component(_gpulab_torch_prefix "${_gpulab_torch_libdir}" DIRECTORY)
  set(_inc "${_gpulab_torch_prefix}/include")
  if(NOT EXISTS "${_inc}/torch/csrc/api/include/torch/version.h")
    message(FATAL_ERROR "gpulab: ${_inc} has no torch/csrc/api/include/torch/version.h")
  endif()
  _gpulab_torch_include_overlay("${_inc}" _inc)
  add_library(gpulab_libtorch INTERFACE IMPORTED GLOBAL)
  set_target_properties(gpulab_libtorch PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${_inc};${_inc}/torch/csrc/api/include"
    # --no-as-needed, as TorchConfig links torch_cpu: its static registrations must load.
    INTERFACE_LINK_LIBRARIES "-Wl,--no-as-needed;${_gpulab_torch_libdir}/libtorch_cpu.so;${_gpulab_torch_libdir}/libc10.so;-Wl,--as-needed"
    # What the wheel's torch_cpu target carries.
    INTERFACE_COMPILE_DEFINITIONS "USE_DISTRIBUTED;USE_C10D_GLOO;USE_RPC;USE_TENSORPIPE")
  set(TORCH_LIBRARIES gpulab_libtorch)
  set(TORCH_INCLUDE_DIRS "${_inc};${_inc}/torch/csrc/api/include")
  # The ABI flag TorchConfig would set: 2.0-2.6 wheels were built with the old ABI.
  set(TORCH_CXX_FLAGS "")
  set(_cfg "${_gpulab_torch_prefix}/share/cmake/Torch/TorchConfig.cmake")
  if(EXISTS "${_cfg}")
    file(STRINGS "${_cfg}" _abi REGEX "_GLIBCXX_USE_CXX11_ABI=[01]")
    if(_abi MATCHES "_GLIBCXX_USE_CXX11_ABI=([01])")
      set(TORCH_CXX_FLAGS "-D_GLIBCXX_USE_CXX11_ABI=${CMAKE_MATCH_1}")
    endif()
  endif()
  set(_gpulab_torch_route "libtorch_cpu + libc10 of a CUDA LibTorch, no TorchConfig")
  # For find_package(gpulab) from this build tree (gpulabConfig.cmake includes it in
  # place of find_dependency(Torch), which would link libtorch_cuda.so).
  file(WRITE "${PROJECT_BINARY_DIR}/gpulabLibTorch.cmake"
    "# Generated by cmake/GpulabTorch.cmake: the LibTorch this gpulab build uses.\n"
    "if(NOT TARGET gpulab_libtorch)\n"
    "  add_library(gpulab_libtorch INTERFACE IMPORTED)\n"
    "  set_target_properties(gpulab_libtorch PROPERTIES\n"
    "    INTERFACE_INCLUDE_DIRECTORIES \"${TORCH_INCLUDE_DIRS}\"\n"
    "    INTERFACE_LINK_LIBRARIES \"-Wl,--no-as-needed;${_gpulab_torch_libdir}/libtorch_cpu.so;${_gpulab_torch_libdir}/libc10.so;-Wl,--as-needed\"\n"
    "    INTERFACE_COMPILE_DEFINITIONS \"USE_DISTRIBUTED;USE_C10D_GLOO;USE_RPC;USE_TENSORPIPE\"\n"
    "    INTERFACE_COMPILE_FEATURES cxx_std_20)\n"
    "endif()\n")
else()
  if(_gpulab_torch_has_cuda)
    # TorchConfig -> Caffe2's cuda.cmake enables the CUDA language. CMake < 3.26 knows no
    # C++20 flag for nvcc, and LibTorch >= 2.14 asks for cxx_std_20 (research: torch2.md).
    if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    endif()
  endif()
  find_package(Torch REQUIRED)
  if(_gpulab_torch_has_cuda)
    get_filename_component(_gpulab_torch_prefix "${_gpulab_torch_libdir}" DIRECTORY)
    if(EXISTS "${_gpulab_torch_prefix}/include/fmt")
      _gpulab_torch_include_overlay("${_gpulab_torch_prefix}/include" _overlay)
      foreach(_t IN ITEMS headeronly c10 c10_cuda torch_cpu torch_cuda torch torch_nvshmem)
        if(TARGET ${_t})
          get_target_property(_dirs ${_t} INTERFACE_INCLUDE_DIRECTORIES)
          if(_dirs)
            string(REPLACE "${_gpulab_torch_prefix}/include" "${_overlay}" _dirs "${_dirs}")
            set_target_properties(${_t} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_dirs}")
          endif()
        endif()
      endforeach()
      list(TRANSFORM TORCH_INCLUDE_DIRS REPLACE "^${_gpulab_torch_prefix}/include" "${_overlay}")
    endif()
  endif()
  set(_gpulab_torch_route "TorchConfig.cmake")
endif()
separate_arguments(GPULAB_TORCH_CXX_FLAGS UNIX_COMMAND "${TORCH_CXX_FLAGS}")

# The version from the headers (Debian's 1.13.1 says 1.13.0; the config files differ).
set(GPULAB_TORCH_VERSION "")
foreach(_dir IN LISTS TORCH_INCLUDE_DIRS)
  foreach(_h IN ITEMS torch/headeronly/version.h torch/version.h)
    if(NOT GPULAB_TORCH_VERSION AND EXISTS "${_dir}/${_h}")
      file(STRINGS "${_dir}/${_h}" _v REGEX "#define TORCH_VERSION_(MAJOR|MINOR) ")
      if(_v MATCHES "MAJOR ([0-9]+).*MINOR ([0-9]+)")
        set(GPULAB_TORCH_VERSION "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}")
        set(_gpulab_torch_version_header "${_dir}/${_h}")
      endif()
    endif()
  endforeach()
endforeach()
if(NOT GPULAB_TORCH_VERSION)
  message(FATAL_ERROR "gpulab: cannot read TORCH_VERSION_MAJOR/MINOR from torch/version.h in ${TORCH_INCLUDE_DIRS}")
endif()
if(NOT Torch_VERSION)
  set(Torch_VERSION "${GPULAB_TORCH_VERSION}")
endif()

# The version of the Debian package that installed the headers, when one did: Debian's
# 1.13.1 headers say 1.13.0, and the software profile should name the release honestly.
# GPULAB_TORCH_PACKAGE_VERSION is empty otherwise (the headers' version is then used).
set(GPULAB_TORCH_PACKAGE_VERSION "")
find_program(_gpulab_dpkg_query dpkg-query)
if(_gpulab_dpkg_query)
  get_filename_component(_gpulab_real_header "${_gpulab_torch_version_header}" REALPATH)
  execute_process(COMMAND "${_gpulab_dpkg_query}" -S "${_gpulab_real_header}"
                  OUTPUT_VARIABLE _gpulab_owner ERROR_QUIET RESULT_VARIABLE _gpulab_rc)
  if(_gpulab_rc EQUAL 0 AND _gpulab_owner MATCHES "^([^:, ]+)")
    execute_process(COMMAND "${_gpulab_dpkg_query}" -W "-f=\${Version}" "${CMAKE_MATCH_1}"
                    OUTPUT_VARIABLE _gpulab_package_version ERROR_QUIET RESULT_VARIABLE _gpulab_rc)
    if(_gpulab_rc EQUAL 0 AND _gpulab_package_version MATCHES "^([0-9]+:)?([0-9]+\\.[0-9]+\\.[0-9]+)")
      set(GPULAB_TORCH_PACKAGE_VERSION "${CMAKE_MATCH_2}")
    endif()
  endif()
endif()

# The CUDA a CUDA LibTorch was built with, for the real-GPU backend's profile, read at
# configure time so that the torch-free CLI can name it: a pip wheel's torch/version.py
# (cuda = '13.2'), else a libtorch zip's build-version (2.15.0+cu132). Empty if neither.
set(GPULAB_TORCH_CUDA_VERSION "")
get_filename_component(_gpulab_torch_root "${_gpulab_torch_libdir}" DIRECTORY)
if(EXISTS "${_gpulab_torch_root}/version.py")
  file(STRINGS "${_gpulab_torch_root}/version.py" _gpulab_line REGEX "^cuda[:=]")
  if(_gpulab_line MATCHES "'([0-9]+\\.[0-9]+)'")
    set(GPULAB_TORCH_CUDA_VERSION "${CMAKE_MATCH_1}")
  endif()
elseif(EXISTS "${_gpulab_torch_root}/build-version")
  file(READ "${_gpulab_torch_root}/build-version" _gpulab_line)
  if(_gpulab_line MATCHES "\\+cu([0-9]+)([0-9])")
    set(GPULAB_TORCH_CUDA_VERSION "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}")
  endif()
endif()

# C++ standard: LibTorch >= 2.14 #errors below C++20 (ATen.h, torch/all.h).
if(GPULAB_CXX_STANDARD STREQUAL "auto")
  if(GPULAB_TORCH_VERSION VERSION_GREATER_EQUAL 2.14)
    set(CMAKE_CXX_STANDARD 20)
  endif()
else()
  set(CMAKE_CXX_STANDARD "${GPULAB_CXX_STANDARD}")
endif()
if(GPULAB_TORCH_VERSION VERSION_GREATER_EQUAL 2.14 AND CMAKE_CXX_STANDARD LESS 20)
  message(FATAL_ERROR "gpulab: LibTorch ${GPULAB_TORCH_VERSION} needs C++20 (GPULAB_CXX_STANDARD=${GPULAB_CXX_STANDARD})")
endif()
if(TARGET gpulab_libtorch AND CMAKE_CXX_STANDARD GREATER_EQUAL 20)
  set_property(TARGET gpulab_libtorch APPEND PROPERTY INTERFACE_COMPILE_FEATURES cxx_std_20)
endif()

# The NVML header (types only: libnvidia-ml.so.1 is opened at run time).
if(GPULAB_BACKEND_RESOLVED STREQUAL "cuda")
  find_path(GPULAB_NVML_INCLUDE_DIR nvml.h
    HINTS ENV GPULAB_NVML_INCLUDE_DIR ${CUDAToolkit_INCLUDE_DIRS} ${CUDA_INCLUDE_DIRS}
          "${_gpulab_torch_prefix}/../nvml/include"
    PATHS /usr/local/cuda/include /usr/include/nvidia/gdk)
  if(NOT GPULAB_NVML_INCLUDE_DIR)
    message(FATAL_ERROR "gpulab: the cuda backend needs nvml.h (the CUDA toolkit's cuda-nvml-dev "
                        "component, or pip's nvidia-nvml-dev: tools/fetch-libtorch2.sh --cuda). "
                        "Pass -DGPULAB_NVML_INCLUDE_DIR=<folder with nvml.h>.")
  endif()
endif()

message(STATUS "gpulab: backend ${GPULAB_BACKEND_RESOLVED}, LibTorch ${GPULAB_TORCH_VERSION} "
               "(${_gpulab_torch_route}), C++${CMAKE_CXX_STANDARD}")
