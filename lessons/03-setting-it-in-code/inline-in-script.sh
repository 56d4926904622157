#!/bin/sh
# The article's way 5 (A1.5): an assignment in front of the command, inside the script.
# It sets the variable for this one program only, replacing what the script had.
# Usage: sh inline-in-script.sh IDS PROGRAM [ARGS...]
ids=$1
shift
CUDA_VISIBLE_DEVICES="$ids" "$@"
