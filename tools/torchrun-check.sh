#!/usr/bin/env bash
# A lesson program under the real `torchrun --no-python` of PyPI's torch wheel (the one
# tools/fetch-libtorch2.sh fetches): two ranks of lesson 13's solution, each must report no
# error, the same parameters, and its own physical GPU (rank r on GPU r).
#
#   tools/torchrun-check.sh BUILD_DIR     # a build against the same LibTorch 2.x (build-torch2)
#
# torchrun's agent serves the rendezvous store (TORCHELASTIC_USE_AGENT_STORE=True); the store's
# wire protocol changes between releases, so the program must use the wheel's own LibTorch.
# `import torch` loads libtorch_cuda.so: the CUDA toolkit's libraries serve it, plus the four
# the toolkit lacks or has too old (NCCL, cuSPARSELt, NVSHMEM, cuFile), from PyPI, pinned to
# the wheel's requirements. Nothing CUDA runs: torchrun only starts processes.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${1:?usage: $0 BUILD_DIR}"
CACHE="${GPULAB_CACHE:-$HOME/.cache/gpulab}"
VENV="$CACHE/torchrun-venv"
say() { echo "torchrun-check: $*" >&2; }

"$ROOT/tools/fetch-libtorch2.sh" >/dev/null  # the wheel, cached
WHEEL="$(ls "$CACHE"/wheels/torch-*.whl | head -n 1)"
if [ ! -x "$VENV/bin/torchrun" ] || [ ! -f "$VENV/.complete" ]; then
  python3 -m venv --help >/dev/null 2>&1 || {
    say "installing python3-venv"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null; }
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  say "installing $(basename "$WHEEL") and what importing it needs into $VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check --no-deps "$WHEEL" \
    "nvidia-nccl-cu13==2.30.7" "nvidia-cusparselt-cu13==0.8.1" "nvidia-nvshmem-cu13==3.7.2" "nvidia-cufile==1.17.1.22.*"
  "$VENV/bin/pip" install -q --disable-pip-version-check filelock typing-extensions sympy networkx jinja2 fsspec
  touch "$VENV/.complete"
fi

work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
mkdir -m 700 "$work/state" "$work/reports"
say "torchrun --no-python --nproc-per-node 2 $BUILD/bin/solution-13"
LD_LIBRARY_PATH="/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  GPULAB_STATE_DIR="$work/state" GPULAB_REPORT_DIR="$work/reports" GPULAB_DIST_TIMEOUT=60 \
  timeout 300 "$VENV/bin/torchrun" --no-python --nproc-per-node 2 "$BUILD/bin/solution-13" --json >"$work/out" 2>&1 \
  || { cat "$work/out" >&2; say "torchrun failed"; exit 1; }
python3 - "$work/reports" <<'PY'
import json, sys
reports = [json.load(open(f"{sys.argv[1]}/rank{r}.json")) for r in range(2)]
hashes = set()
for rank, report in enumerate(reports):
    assert report["exit_code"] == 0 and not report["errors"], f"rank {rank}: {report['errors']}"
    observed = [o for o in report["observations"] if o["label"] == "after training"][0]
    gpus = sorted(g["physical_index"] for g in observed["gpus"] if g["used_bytes"] > 0 or g["context"])
    assert gpus == [rank], f"rank {rank} used physical GPUs {gpus}, expected [{rank}]"
    hashes.add(report["facts"]["parameters_hash"])
assert len(hashes) == 1, f"ranks differ: {hashes}"
print("torchrun-check: 2 ranks under torchrun --no-python: rank r on physical GPU r, same parameters")
PY
