# Strict warnings for gpulab's own code; -Werror in CI (GPULAB_WERROR=ON).
function(gpulab_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                           -Wold-style-cast -Wcast-align)
  if(GPULAB_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# ASan + UBSan for the torch-free core (GPULAB_SANITIZE=ON).
function(gpulab_sanitize target)
  if(GPULAB_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
endfunction()
