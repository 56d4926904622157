#!/usr/bin/env bash
# Read facts about a released PyTorch build out of its default PyPI wheel and write
# tests/fixtures/torch-facts/VERSION.json. Run by hand (network), not in CI.
#
#   tools/torch-facts.sh 2.15.0
#   tools/torch-facts.sh --same-device 2.15.0   # tests/fixtures/torch-facts/same-device/2.15.0.json
#
# pip picks the wheel (cp311, manylinux x86_64) and reports its URL and sha256; only
# torch/version.py, torch/cuda/__init__.py, libc10_cuda.so and libtorch_python.so are
# read, with HTTP Range requests. Idempotent: a re-run rewrites the same bytes.
# Optional: TORCH_FACTS_PYTORCH_GIT=/path/to/pytorch/.git pins upstream snippets to vX.Y.Z.
set -euo pipefail

log() { echo "torch-facts: $*" >&2; }
usage() { echo "usage: $0 [--same-device] VERSION   (a torch release such as 2.15.0)" >&2; exit 2; }

SAME_DEVICE=0
if [ "${1:-}" = "--same-device" ]; then SAME_DEVICE=1; shift; fi
[ $# -eq 1 ] || usage
VERSION="$1"
[[ "$VERSION" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { log "odd VERSION '$VERSION'"; usage; }

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT_DIR="$ROOT/tests/fixtures/torch-facts"

need_binutils=0
for t in objdump strings nm; do command -v "$t" >/dev/null 2>&1 || need_binutils=1; done
if [ "$need_binutils" = 1 ]; then
  log "binutils missing; installing with apt-get"
  apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y binutils >&2
fi
command -v python3 >/dev/null 2>&1 || { log "python3 is required"; exit 1; }
python3 -m pip --version >/dev/null 2>&1 || { log "pip is required (python3 -m pip)"; exit 1; }

if [ "$SAME_DEVICE" = 1 ]; then
  # libtorch_cpu.so and the CUDA libraries (TORCH_FACTS_CPU_ONLY=1: libtorch_cpu.so alone)
  mkdir -p "$OUT_DIR/same-device"
  log "torch==$VERSION -> ${OUT_DIR#$ROOT/}/same-device/$VERSION.json"
  python3 "$ROOT/tools/torch_facts.py" --same-device "$VERSION" "$OUT_DIR/same-device/$VERSION.json"
  log "done"
  exit 0
fi
mkdir -p "$OUT_DIR"
log "torch==$VERSION -> ${OUT_DIR#$ROOT/}/$VERSION.json"
python3 "$ROOT/tools/torch_facts.py" "$VERSION" "$OUT_DIR/$VERSION.json"
log "done"
