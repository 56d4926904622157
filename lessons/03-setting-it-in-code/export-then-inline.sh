#!/bin/sh
# Ways 4 and 5 at once (A1.6): `export CUDA_VISIBLE_DEVICES=A && CUDA_VISIBLE_DEVICES=B prog`.
# The program gets B: the inline assignment is the setting closest to it.
# Usage: sh export-then-inline.sh EXPORT_IDS INLINE_IDS PROGRAM [ARGS...]
exported=$1
inline=$2
shift 2
export CUDA_VISIBLE_DEVICES="$exported" && CUDA_VISIBLE_DEVICES="$inline" "$@"
