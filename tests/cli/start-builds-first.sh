#!/bin/sh
# gpulab start builds the lesson it starts at before the first question, in process, with
# ninja on just that program: the first ninja it runs (a wrapper on the PATH logs each) names
# lesson-NN alone. The order of what it builds next is the unit tests' (targets_ahead).
#   start-builds-first.sh GPULAB LESSON
set -eu
gpulab="$1" lesson="$2"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
real="$(command -v ninja)"
printf '#!/bin/sh\necho "$*" >> "%s/log"\nexec "%s" "$@"\n' "$dir" "$real" > "$dir/ninja"
chmod +x "$dir/ninja"
PATH="$dir:$PATH" GPULAB_PROGRESS_FILE="$dir/progress" "$gpulab" start --lesson "$lesson" --no-watch </dev/null >/dev/null
head -n 1 "$dir/log"
