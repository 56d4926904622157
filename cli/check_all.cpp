// gpulab check all (filled in by check.cpp's dispatch)
