# One program per lesson exercise (lesson-NN) and per solution (solution-NN), from the
# manifest. Each is one small TU that reuses the LibTorch precompiled header.
file(READ "${PROJECT_SOURCE_DIR}/lessons/manifest.json" _manifest)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/lessons/manifest.json")
string(JSON _count LENGTH "${_manifest}" lessons)
set(GPULAB_LESSON_IDS "")
# A student edition (`gpulab export --student`, docs/student-edition.md) has a class file and
# no solutions/: no solution-NN programs, and the tests that need them are left out.
set(GPULAB_STUDENT_EDITION OFF)
if(EXISTS "${PROJECT_SOURCE_DIR}/student-edition.conf")
  set(GPULAB_STUDENT_EDITION ON)
endif()
# `gpulab_programs`: every lesson and solution program and the CLI, without the tests (CI's
# CUDA stage builds only what a learner runs on real GPUs; the tests are built on the GPU).
add_custom_target(gpulab_programs)
add_dependencies(gpulab_programs gpulab_cli)

function(gpulab_add_lesson_program target source)
  # With the prestart entry (src/report/prestart_entry.cpp): the checks' scenarios fork from
  # one loaded copy of the program, each run still a fresh process from the program's view.
  add_executable(${target} "${source}" $<TARGET_OBJECTS:gpulab_prestart_entry>)
  target_link_libraries(${target} PRIVATE gpulab)
  gpulab_warnings(${target})
  gpulab_quick_rebuild(${target})
endfunction()

if(_count GREATER 0)
  math(EXPR _last "${_count} - 1")
  foreach(_i RANGE ${_last})
    string(JSON _id GET "${_manifest}" lessons ${_i} id)
    string(JSON _slug GET "${_manifest}" lessons ${_i} slug)
    if(NOT EXISTS "${PROJECT_SOURCE_DIR}/lessons/${_id}-${_slug}/main.cpp")
      message(WARNING "lesson ${_id}: lessons/${_id}-${_slug}/main.cpp is missing; skipped")
      continue()
    endif()
    # (A student's checkout is graded with this target's own commands: grading/recipes.h.)
    gpulab_add_lesson_program(lesson-${_id} "${PROJECT_SOURCE_DIR}/lessons/${_id}-${_slug}/main.cpp")
    add_dependencies(gpulab_programs lesson-${_id})
    # The learner's file: every edit is a cache miss, and a miss costs ~0.5 s of hashing
    # LibTorch's headers on top of the ~2 s compile (bench/tutorial-verdict.py).
    set_target_properties(lesson-${_id} PROPERTIES CXX_COMPILER_LAUNCHER "")
    set(_solution "${PROJECT_SOURCE_DIR}/solutions/${_id}-${_slug}/main.cpp")
    if(EXISTS "${_solution}")
      gpulab_add_lesson_program(solution-${_id} "${_solution}")
      add_dependencies(gpulab_programs solution-${_id})
    elseif(NOT GPULAB_STUDENT_EDITION)
      message(WARNING "lesson ${_id}: solutions/${_id}-${_slug}/main.cpp is missing; no solution-${_id}")
    endif()
    list(APPEND GPULAB_LESSON_IDS ${_id})
  endforeach()
endif()
