# find_package(gpulab) from the build tree (gpulab_DIR=<build>) or an install tree.
include(CMakePackageConfigHelpers)
set(_config_dir "${CMAKE_INSTALL_LIBDIR}/cmake/gpulab")

install(TARGETS gpulab EXPORT gpulabTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS gpulab_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/gpulab DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY nodes/ DESTINATION ${CMAKE_INSTALL_DATADIR}/gpulab/nodes)
install(EXPORT gpulabTargets NAMESPACE gpulab:: DESTINATION ${_config_dir})
export(EXPORT gpulabTargets NAMESPACE gpulab:: FILE "${PROJECT_BINARY_DIR}/gpulabTargets.cmake")

configure_package_config_file(cmake/gpulabConfig.cmake.in "${PROJECT_BINARY_DIR}/gpulabConfig.cmake"
  INSTALL_DESTINATION ${_config_dir})
write_basic_package_version_file("${PROJECT_BINARY_DIR}/gpulabConfigVersion.cmake" COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/gpulabConfig.cmake" "${PROJECT_BINARY_DIR}/gpulabConfigVersion.cmake"
  DESTINATION ${_config_dir})
