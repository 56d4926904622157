#!/usr/bin/env bash
# Fetch gpulab's default LibTorch, PyPI's `torch` wheel (pinned by version and hash), and
# print the CMake prefix (for CMAKE_PREFIX_PATH / -DLIBTORCH_PREFIX) on stdout. Progress
# goes to stderr. Idempotent: a finished unpack is reused. `./gpulab setup` calls it.
#
#   prefix=$(tools/fetch-libtorch2.sh)          # -> $GPULAB_CACHE/libtorch-<ver>/torch
#   prefix=$(tools/fetch-libtorch2.sh --cuda)   # also nvml.h (-> <prefix>/../nvml/include),
#                                               # which the cuda backend compiles against
set -euo pipefail

WITH_CUDA_EXTRAS=0
for arg in "$@"; do
  case "$arg" in
    --cuda) WITH_CUDA_EXTRAS=1 ;;
    *) echo "usage: $0 [--cuda]" >&2; exit 2 ;;
  esac
done

TORCH_VERSION="${GPULAB_TORCH_VERSION:-2.15.0}"
# The wheel is a CUDA build: libtorch_cpu.so itself has DT_NEEDED libcudart.so.13 and
# libcupti.so.13 (kineto). These two small wheels (pinned to the wheel's own
# cuda-toolkit==13.2.2 requirement) make CPU-only linking/loading work on hosts
# without a CUDA toolkit. Adjust together with TORCH_VERSION.
CUDA_RT_VERSION="${GPULAB_CUDA_RT_VERSION:-13.2.86}"

# The pinned files' sha256 (pip --require-hashes): a changed or corrupted download fails
# instead of building gpulab on it. Another GPULAB_TORCH_VERSION is fetched unpinned.
declare -A PINNED=(
  [torch-2.15.0]=48c2d861134c0b5697c7602cb5ffa68f62a2989fdcd1717e593356f67996ca1e
  [nvidia-cuda-runtime-13.2.86]=3498247680dfddce31bad102af7e3e26fc795342a3cac64722bb0fa95e7f60f0
  [nvidia-cuda-cupti-13.2.86]=8fa29f15dd8336181f961764d9d95236fc6b931dd0c8fcf8cd70aab0c310b586
  [nvidia-nvml-dev-13.2.86]=7521790e56a3eae3e3fbdaa555a66ff4159e7bc45b5d5a84f14f2e5951367603
)

CACHE="${GPULAB_CACHE:-$HOME/.cache/gpulab}"
DEST="$CACHE/libtorch-$TORCH_VERSION"
WHEELS="$CACHE/wheels"

log() { echo "fetch-libtorch2: $*" >&2; }

# download <name> <version> [what]: the wheel into $WHEELS, by hash when pinned; pip shows
# its progress bar when stderr is a terminal.
download() {
  local name="$1" version="$2" what="${3:-}" req
  req="$(mktemp)"
  local hash="${PINNED[$name-$version]:-}"
  if [ -n "$hash" ]; then
    echo "$name==$version --hash=sha256:$hash" >"$req"
  else
    log "warning: $name==$version is not pinned by hash in $0"
    echo "$name==$version" >"$req"
  fi
  log "downloading $name==$version${what:+ ($what)}"
  local pinned=(); [ -n "$hash" ] && pinned=(--require-hashes)
  python3 -m pip download --no-deps --only-binary=:all: "${PIP_TAGS[@]}" "${pinned[@]}" --progress-bar on \
    --disable-pip-version-check -d "$WHEELS" -r "$req" >&2 || { rm -f "$req"; log "error: could not download $name==$version"; exit 1; }
  rm -f "$req"
}

ensure_pip() {
  if ! python3 -m pip --version >/dev/null 2>&1; then
    log "python3 -m pip missing; installing python3-pip via apt"
    apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y python3-pip >&2
  fi
}

# nvml.h (types only; gpulab opens libnvidia-ml.so.1 at run time) from pip's
# nvidia-nvml-dev, pinned like the CUDA runtime. Separate from the .complete stamp, so an
# existing unpack gains it.
cuda_extras() {
  local header="$DEST/nvml/include/nvml.h"
  [ -f "$header" ] && return 0
  ensure_pip
  mkdir -p "$WHEELS"
  compgen -G "$WHEELS/nvidia_nvml_dev-${CUDA_RT_VERSION}-*.whl" >/dev/null || download nvidia-nvml-dev "$CUDA_RT_VERSION"
  mkdir -p "$DEST/nvml/include"
  python3 - "$header" "$WHEELS" "$CUDA_RT_VERSION" <<'PY'
import glob, os, sys, zipfile
header, wheels, cv = sys.argv[1:]
whl = sorted(glob.glob(os.path.join(wheels, f"nvidia_nvml_dev-{cv}-*.whl")))[0]
with zipfile.ZipFile(whl) as z:
    name = next(n for n in z.namelist() if n.endswith("/include/nvml.h"))
    with open(header + ".tmp", "wb") as out:
        out.write(z.read(name))
os.replace(header + ".tmp", header)
PY
}

# Pin interpreter/platform tags so the same files are fetched whatever python3 the
# host has (the C++ parts of the wheel do not depend on the Python version).
PIP_TAGS=(--python-version 3.11 --implementation cp --abi cp311 --abi none
          --platform manylinux_2_28_x86_64 --platform manylinux_2_25_x86_64
          --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64)

# Fast path: finished unpack (stamp is written last; an unpack from before version.py was
# kept is redone from the cached wheel).
if [ -f "$DEST/.complete" ] && [ -f "$DEST/torch/version.py" ]; then
  [ "$WITH_CUDA_EXTRAS" = 1 ] && cuda_extras
  echo "$DEST/torch"
  exit 0
fi

ensure_pip

mkdir -p "$WHEELS"
# A cached wheel is used as it is (pip checked its hash when it came); pip is asked only
# for a missing one.
compgen -G "$WHEELS/torch-${TORCH_VERSION}-*.whl" >/dev/null || download torch "$TORCH_VERSION" "about 540 MB, once"
compgen -G "$WHEELS/nvidia_cuda_runtime-${CUDA_RT_VERSION}-*.whl" >/dev/null || download nvidia-cuda-runtime "$CUDA_RT_VERSION"
compgen -G "$WHEELS/nvidia_cuda_cupti-${CUDA_RT_VERSION}-*.whl" >/dev/null || download nvidia-cuda-cupti "$CUDA_RT_VERSION"

# Unpack into a temp dir and rename, so an interrupted run never looks finished.
TMP="$DEST.tmp.$$"
trap 'rm -rf "$TMP"' EXIT
rm -rf "$TMP" && mkdir -p "$TMP"
log "unpacking into $DEST"
python3 - "$TMP" "$WHEELS" "$TORCH_VERSION" "$CUDA_RT_VERSION" <<'PY'
import glob, os, sys, zipfile
dest, wheels, tv, cv = sys.argv[1:]
def extract(pattern, want):
    whl = sorted(glob.glob(os.path.join(wheels, pattern)))[0]
    with zipfile.ZipFile(whl) as z:
        for m in z.infolist():
            out = want(m.filename)
            if out and not m.is_dir():
                path = os.path.join(dest, out)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with z.open(m) as src, open(path, "wb") as dst:
                    while chunk := src.read(1 << 20):
                        dst.write(chunk)
                os.chmod(path, 0o755 if ".so" in out else 0o644)
# Only what a C++ consumer needs: headers, shared libs, CMake package files, and
# version.py (the CUDA the build used, for the real-GPU backend's profile). All of
# torch/lib is kept so the wheel's own TorchConfig.cmake (which checks that
# libtorch_cuda.so etc. exist) stays usable.
keep = ("torch/include/", "torch/lib/", "torch/share/cmake/", "torch/version.py")
extract(f"torch-{tv}-*.whl", lambda n: n if n.startswith(keep) else None)
# libtorch_cpu.so has RUNPATH $ORIGIN, so these are found at link and load time
# from torch/lib with no -rpath-link / LD_LIBRARY_PATH.
for pkg, lib in (("runtime", "libcudart.so.13"), ("cupti", "libcupti.so.13")):
    extract(f"nvidia_cuda_{pkg}-{cv}-*.whl",
            lambda n, lib=lib: "torch/lib/" + lib if n == "nvidia/cu13/lib/" + lib else None)
PY
[ -f "$TMP/torch/share/cmake/Torch/TorchConfig.cmake" ] || { log "unpack incomplete"; exit 1; }
touch "$TMP/.complete"
rm -rf "$DEST"
mv "$TMP" "$DEST"
trap - EXIT
[ "$WITH_CUDA_EXTRAS" = 1 ] && cuda_extras
echo "$DEST/torch"
