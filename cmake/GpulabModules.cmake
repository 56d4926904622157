# gpulab_module(NAME SOURCES... [DEPENDS module...] [PRIVATE_LIBS lib...]): one torch-free
# module of src/ as a static library gpulab_NAME. Modules include each other as
# "module/header.h" from src/; DEPENDS names the modules it may use, and
# tools/check-dependencies.py holds the same rule for the #include lines.
function(gpulab_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS;PRIVATE_LIBS;PUBLIC_LIBS" ${ARGN})
  add_library(gpulab_${name} STATIC ${ARG_SOURCES})
  target_include_directories(gpulab_${name} PUBLIC "${PROJECT_SOURCE_DIR}/src" "${PROJECT_SOURCE_DIR}/include")
  foreach(_dep IN LISTS ARG_DEPENDS)
    target_link_libraries(gpulab_${name} PUBLIC gpulab_${_dep})
  endforeach()
  target_link_libraries(gpulab_${name} PRIVATE ${ARG_PRIVATE_LIBS} PUBLIC ${ARG_PUBLIC_LIBS})
  gpulab_warnings(gpulab_${name})
  gpulab_unity(gpulab_${name})
endfunction()
