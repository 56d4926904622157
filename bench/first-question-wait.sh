# Sourced by bench/first-question.sh and bench/shared-cache.sh: how long `./gpulab start
# --no-watch` in a clone takes to ask lesson 01's first prediction.
#   seconds_to_first_question CLONE LOG   prints "S.mmm"; the tutorial's output goes to LOG
# The tutorial reads its answers as lines and gets none: its input is a pipe this shell holds
# open and never writes (no feeder process to outlive it). Its own process group (setsid), so
# the tutorial and its background builds stop together.
seconds_to_first_question() {
  local clone="$1" log="$2" fifo="$2.answers" question tutor start ms
  question="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["lessons"][0]["predictions"][0]["question"][:40])' "$clone/lessons/manifest.json")"
  mkfifo "$fifo"
  exec 3<>"$fifo"
  start=$(date +%s%N)
  ( cd "$clone" && GPULAB_STATE_DIR="${GPULAB_STATE_DIR:-$clone.state}" exec setsid ./gpulab start --no-watch ) <"$fifo" >"$log" 2>&1 &
  tutor=$!
  until grep -qF "$question" "$log" 2>/dev/null; do
    kill -0 "$tutor" 2>/dev/null || { echo "./gpulab start in $clone ended before its first question:" >&2; tail -20 "$log" >&2; return 1; }
    sleep 0.2
  done
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  kill -- -"$tutor" 2>/dev/null || kill "$tutor" 2>/dev/null || true
  wait "$tutor" 2>/dev/null || true
  exec 3>&-
  echo "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
}
