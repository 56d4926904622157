#!/bin/sh
# The article's way 4 (A1.4): the script exports the variable, then starts the program.
# The export replaces any value the script inherited, for every program started after it.
# Usage: sh export-in-script.sh IDS PROGRAM [ARGS...]
ids=$1
shift
export CUDA_VISIBLE_DEVICES="$ids" && "$@"
