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

# Patched solutions (tests/mutations, tests/variants): a program <prefix>-<id>-<name> for
# each <patches>/lesson<id>/<name>.patch, compiled from <build>/<sources>/<id>/<name>.cpp,
# which `gpulab dev mutants` / `dev variants` writes (the solution, patched) before building
# them. Not in `all`: the tests build them.
function(gpulab_add_patched_programs patches prefix sources id)
  file(GLOB _patches CONFIGURE_DEPENDS "${patches}/lesson${id}/*.patch")
  foreach(_patch IN LISTS _patches)
    get_filename_component(_name "${_patch}" NAME_WE)
    if(NOT _name MATCHES "^[a-z0-9][a-z0-9-]*$")
      message(FATAL_ERROR "${_patch}: name it in lower-case letters, digits and dashes")
    endif()
    set(_source "${PROJECT_BINARY_DIR}/${sources}/${id}/${_name}.cpp")
    set_source_files_properties("${_source}" PROPERTIES GENERATED TRUE)
    gpulab_add_lesson_program(${prefix}-${id}-${_name} "${_source}")
    set_target_properties(${prefix}-${id}-${_name} PROPERTIES EXCLUDE_FROM_ALL TRUE)
    target_compile_options(${prefix}-${id}-${_name} PRIVATE -Wno-error)  # a student's answer may warn
  endforeach()
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
