# find_package(gpulab) from the build tree (gpulab_DIR=<build>) or an install tree.
include(CMakePackageConfigHelpers)
set(_config_dir "${CMAKE_INSTALL_LIBDIR}/cmake/gpulab")

install(TARGETS gpulab EXPORT gpulabTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS gpulab_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# Installed headers: the lesson API alone, these eight (tools/check-dependencies.py's
# PUBLIC_HEADERS; nothing else may live in include/). src/ is never installed: libgpulab
# links its modules privately, so a lab program needs none of their headers.
set(GPULAB_PUBLIC_HEADERS lesson.h cuda.h observe.h data_parallel.h distributed.h warnings.h threads.h processes.h)
file(GLOB_RECURSE _in_include RELATIVE "${PROJECT_SOURCE_DIR}/include/gpulab" CONFIGURE_DEPENDS
  "${PROJECT_SOURCE_DIR}/include/gpulab/*")
list(REMOVE_ITEM _in_include ${GPULAB_PUBLIC_HEADERS})
if(_in_include)
  message(FATAL_ERROR "gpulab: include/gpulab holds only the public lesson API (${GPULAB_PUBLIC_HEADERS}); "
                      "move ${_in_include} under src/ (src/README.md)")
endif()
list(TRANSFORM GPULAB_PUBLIC_HEADERS PREPEND "${PROJECT_SOURCE_DIR}/include/gpulab/" OUTPUT_VARIABLE _public_headers)
install(FILES ${_public_headers} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/gpulab)
install(DIRECTORY nodes/ DESTINATION ${CMAKE_INSTALL_DATADIR}/gpulab/nodes)
install(EXPORT gpulabTargets NAMESPACE gpulab:: DESTINATION ${_config_dir})
export(EXPORT gpulabTargets NAMESPACE gpulab:: FILE "${PROJECT_BINARY_DIR}/gpulabTargets.cmake")

configure_package_config_file(cmake/gpulabConfig.cmake.in "${PROJECT_BINARY_DIR}/gpulabConfig.cmake"
  INSTALL_DESTINATION ${_config_dir})
write_basic_package_version_file("${PROJECT_BINARY_DIR}/gpulabConfigVersion.cmake" COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/gpulabConfig.cmake" "${PROJECT_BINARY_DIR}/gpulabConfigVersion.cmake"
  DESTINATION ${_config_dir})
# A build against pip's CPU libraries writes how it found LibTorch (cmake/GpulabTorch.cmake);
# an installed gpulab needs it too, or find_dependency(Torch) would take the CUDA LibTorch.
if(EXISTS "${PROJECT_BINARY_DIR}/gpulabLibTorch.cmake")
  install(FILES "${PROJECT_BINARY_DIR}/gpulabLibTorch.cmake" DESTINATION ${_config_dir})
endif()
