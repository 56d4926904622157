#!/bin/sh
# The article's way 3 (A1.3): the script sets nothing. Set the variable for the script,
#   CUDA_VISIBLE_DEVICES=3 sh run.sh build/bin/lesson-03
# and every program the script starts inherits it.
# Usage: sh run.sh PROGRAM [ARGS...]
"$@"
