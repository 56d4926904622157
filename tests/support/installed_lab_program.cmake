# package.install-has-only-the-lesson-api: `cmake --install` of the build into a fresh
# prefix installs the six public headers of include/gpulab and no other header, and
# find_package(gpulab) from that prefix builds and runs docs/examples/lab-program.
#
#   cmake -DBUILD=<build> -DSOURCE=<source> -DWORK=<scratch folder> -DGENERATOR=<generator>
#         -DCTEST=<ctest> [-DPREFIX_PATH=<CMAKE_PREFIX_PATH>] [-DCOMPILER=<the build's C++ compiler>]
#         -P installed_lab_program.cmake
foreach(_var IN ITEMS BUILD SOURCE WORK GENERATOR CTEST)
  if(NOT DEFINED ${_var})
    message(FATAL_ERROR "installed_lab_program.cmake: -D${_var}=... is required")
  endif()
endforeach()
set(_prefix "${WORK}/prefix")
file(REMOVE_RECURSE "${WORK}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD}" --prefix "${_prefix}"
  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed:\n${_out}")
endif()

# Every installed header, wherever it went: only the lesson API, under include/gpulab.
file(GLOB_RECURSE _headers RELATIVE "${_prefix}" "${_prefix}/*.h" "${_prefix}/*.hpp")
list(SORT _headers)
file(GLOB _public RELATIVE "${SOURCE}" "${SOURCE}/include/gpulab/*.h")
list(SORT _public)
if(NOT _headers STREQUAL _public)
  message(FATAL_ERROR "installed headers: ${_headers}\nexpected exactly the lesson API: ${_public}")
endif()
message(STATUS "installed headers: only the lesson API (${_headers})")

file(GLOB_RECURSE _config "${_prefix}/*/gpulabConfig.cmake")
if(NOT _config)
  message(FATAL_ERROR "no gpulabConfig.cmake under ${_prefix}")
endif()
list(GET _config 0 _config)
get_filename_component(_config_dir "${_config}" DIRECTORY)
set(_compiler)
if(COMPILER)
  set(_compiler "-DCMAKE_CXX_COMPILER=${COMPILER}")  # the build's: a fresh project would take GCC
endif()
execute_process(COMMAND "${CTEST}" --build-and-test
    "${SOURCE}/docs/examples/lab-program" "${WORK}/lab-program"
    --build-generator "${GENERATOR}"
    --build-options "-Dgpulab_DIR=${_config_dir}" "-DCMAKE_PREFIX_PATH=${PREFIX_PATH}" ${_compiler}
    --test-command "${WORK}/lab-program/lab_program"
  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
message("${_out}")
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "the lab program did not build and run against the installed gpulab")
endif()
