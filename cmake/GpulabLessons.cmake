# One program per lesson exercise (lesson-NN) and per solution (solution-NN), from the
# manifest. Each is one small TU that reuses the LibTorch precompiled header.
file(READ "${PROJECT_SOURCE_DIR}/lessons/manifest.json" _manifest)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/lessons/manifest.json")
string(JSON _count LENGTH "${_manifest}" lessons)
set(GPULAB_LESSON_IDS "")

function(gpulab_add_lesson_program target source)
  add_executable(${target} "${source}")
  target_link_libraries(${target} PRIVATE gpulab)
  gpulab_warnings(${target})
  gpulab_quick_rebuild(${target})
endfunction()

if(_count GREATER 0)
  math(EXPR _last "${_count} - 1")
  foreach(_i RANGE ${_last})
    string(JSON _id GET "${_manifest}" lessons ${_i} id)
    string(JSON _slug GET "${_manifest}" lessons ${_i} slug)
    gpulab_add_lesson_program(lesson-${_id} "${PROJECT_SOURCE_DIR}/lessons/${_id}-${_slug}/main.cpp")
    gpulab_add_lesson_program(solution-${_id} "${PROJECT_SOURCE_DIR}/solutions/${_id}-${_slug}/main.cpp")
    list(APPEND GPULAB_LESSON_IDS ${_id})
  endforeach()
endif()
