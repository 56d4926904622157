#!/usr/bin/env bash
# device-check: gpulab on a machine with real NVIDIA GPUs (docs/real-gpus.md).
#   1. builds the cuda backend (GPULAB_BACKEND=cuda) against a CUDA LibTorch and runs
#      every test; checks whose scenario needs more GPUs than the machine has skip
#      themselves ("needs 4 GPUs, found 1");
#   2. runs tools/device-probe under single-GPU scenarios (CUDA_VISIBLE_DEVICES unset, 0,
#      "0,0", "0,1", "1,0", "-1", empty, full UUID, UUID prefix; context size after the
#      first allocation; out-of-memory and invalid-ordinal messages) on the GPUs and, built
#      with the simulated backend, on a node file made from this machine's nvidia-smi data;
#   3. records the software profile (linked PyTorch, CUDA runtime) of both sides and runs
#      each of the profile's context rules (docs/reference.md, "Profiles") in a process
#      of its own, on the GPUs and on the simulator set to the same runtime;
#   4. writes both side by side to docs/conformance.md.
#
#   tools/device-check.sh [--out FILE] [--predict-from CSV]
#     --out FILE           where the table goes (default docs/conformance.md)
#     --predict-from CSV   no GPU needed: the simulator's column only, for the GPUs in CSV
#                          (nvidia-smi --query-gpu=name,uuid,pci.bus_id,memory.total,compute_cap
#                          --format=csv,noheader,nounits)
#   Environment: LIBTORCH_PREFIX (a CUDA LibTorch; default: python3's torch, then
#   tools/fetch-libtorch2.sh's cache), GPULAB_DEVICE_BUILD (default build-device),
#   GPULAB_NVML_INCLUDE_DIR, TORCH_CUDA_ARCH_LIST, JOBS.
#
# Exit codes: 0 done (tests may have skipped), or no GPU here ("no GPU: ..." on stdout);
#             1 a build or a test failed (the table is still written when the probes ran);
#             2 a prerequisite is missing (CUDA LibTorch, nvcc, nvml.h, python3), said why.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$ROOT/docs/conformance.md"
PREDICT_FROM=""
while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT="$2"; shift 2 ;;
    --predict-from) PREDICT_FROM="$2"; shift 2 ;;
    -h|--help) sed -n '2,27p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "device-check: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
BUILD="${GPULAB_DEVICE_BUILD:-$ROOT/build-device}"
JOBS="${JOBS:-$(nproc 2>/dev/null || echo 2)}"
WORK="$BUILD/check"
say() { printf 'device-check: %s\n' "$*" >&2; }
missing() { say "cannot run: $*"; exit 2; }

# ---- 0. Is there a GPU? ---------------------------------------------------------------
if [ -z "$PREDICT_FROM" ] && ! command -v nvidia-smi >/dev/null; then
  echo "no GPU: nvidia-smi is not installed (no NVIDIA driver); nothing to check on this machine."
  echo "  The simulator's predictions alone: tools/device-check.sh --predict-from <nvidia-smi csv>"
  exit 0
fi
command -v python3 >/dev/null || missing "python3 is needed to read the probes' JSON"
mkdir -p "$WORK"
SMI_CSV="$WORK/nvidia-smi.csv"
if [ -n "$PREDICT_FROM" ]; then
  cp "$PREDICT_FROM" "$SMI_CSV"
else
  if ! nvidia-smi --query-gpu=name,uuid,pci.bus_id,memory.total,compute_cap --format=csv,noheader,nounits \
       >"$SMI_CSV" 2>"$WORK/nvidia-smi.err" || [ ! -s "$SMI_CSV" ]; then
    echo "no GPU: nvidia-smi lists no GPU: $(cat "$SMI_CSV" "$WORK/nvidia-smi.err" | head -c 300 | tr '\n' ' ')"
    exit 0
  fi
fi
GPU_COUNT=$(grep -c . "$SMI_CSV")
say "GPUs: $(cut -d, -f1 "$SMI_CSV" | sort | uniq -c | tr -s ' ' | tr '\n' ';')"

# ---- 1. LibTorch, CUDA toolkit, nvml.h ------------------------------------------------
find_libtorch() {
  if [ -n "${LIBTORCH_PREFIX:-}" ]; then echo "$LIBTORCH_PREFIX"; return; fi
  local py
  py=$(python3 -c 'import os, torch; print(os.path.dirname(torch.__file__) if torch.version.cuda else "")' 2>/dev/null || true)
  if [ -n "$py" ] && [ -f "$py/lib/libtorch_cuda.so" ]; then echo "$py"; return; fi
  local cached
  cached=$(ls -d "${GPULAB_CACHE:-$HOME/.cache/gpulab}"/libtorch-*/torch 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -n "$cached" ]; then echo "$cached"; return; fi
  "$ROOT/tools/fetch-libtorch2.sh" --cuda 2>>"$WORK/fetch.log" || true
}
find_nvml() {
  local d
  for d in "${GPULAB_NVML_INCLUDE_DIR:-}" /usr/local/cuda/include /usr/include "$1/../nvml/include" \
           $(python3 -c 'import nvidia, os; print(" ".join(os.path.join(p, s, "include") for p in nvidia.__path__ for s in os.listdir(p)))' 2>/dev/null || true); do
    [ -n "$d" ] && [ -f "$d/nvml.h" ] && { echo "$d"; return; }
  done
  true
}
TORCH="$(find_libtorch)"
[ -n "$TORCH" ] && [ -f "$TORCH/lib/libtorch_cuda.so" ] ||
  missing "no CUDA LibTorch (set LIBTORCH_PREFIX to a folder with lib/libtorch_cuda.so and share/cmake/Torch; pip's torch or pytorch.org's cuXXX archive)"
say "LibTorch: $TORCH"

if [ -z "$PREDICT_FROM" ]; then
  NVCC="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)"
  [ -x "$NVCC" ] || missing "no CUDA toolkit (nvcc): LibTorch's TorchConfig.cmake needs one for a CUDA build"
  NVML_DIR="$(find_nvml "$TORCH")"
  [ -n "$NVML_DIR" ] || missing "no nvml.h (CUDA toolkit's cuda-nvml-dev, or pip's nvidia-nvml-dev; or set GPULAB_NVML_INCLUDE_DIR)"
  ARCH="${TORCH_CUDA_ARCH_LIST:-$(cut -d, -f5 "$SMI_CSV" | tr -d ' ' | sort -u | paste -sd ';')}"
fi

status=0
LEAN=(-G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O0)
cmake_build() {  # cmake_build <dir> <log> [targets...]
  local dir="$1" log="$2"; shift 2
  local targets=()
  for t in "$@"; do targets+=(--target "$t"); done
  if ! cmake --build "$dir" "${targets[@]}" -- -j"$JOBS" >"$log" 2>&1; then
    grep -v '^\[' "$log" | tail -n 40 >&2
    return 1
  fi
}

# The scenarios: label, then CUDA_VISIBLE_DEVICES (the word UNSET for unset).
UUID0=$(head -n 1 "$SMI_CSV" | cut -d, -f2 | tr -d ' ')
SCENARIOS=("unset|UNSET" "0|0" "0,0|0,0" "0,1|0,1" "1,0|1,0" "-1|-1" "empty|"
           "full UUID|$UUID0" "UUID prefix|${UUID0:0:12}")

run_probes() {  # run_probes <probe binary> <out dir> [env...]: one JSON per scenario
  local probe="$1" dir="$2"; shift 2
  mkdir -p "$dir"
  local i=0 entry label value
  for entry in "${SCENARIOS[@]}"; do
    label="${entry%%|*}"; value="${entry#*|}"
    local steps=(visible)
    [ "$label" = "unset" ] && steps=(visible properties profile context oom ordinal)
    local envs=(-u CUDA_VISIBLE_DEVICES -u CUDA_DEVICE_ORDER "$@")
    [ "$value" != "UNSET" ] && envs+=("CUDA_VISIBLE_DEVICES=$value")
    env "${envs[@]}" GPULAB_STATE_DIR="$(mktemp -d)" timeout 300 "$probe" "${steps[@]}" \
      >"$dir/$i.json" 2>"$dir/$i.err" || echo "{\"error\": \"probe exited with $?\"}" >"$dir/$i.json"
    i=$((i + 1))
  done
}

# The profile's context rules, each in a process of its own (contexts are per process).
RULES=(rule_guard rule_guard_exit rule_randn rule_set_device rule_set_device0)
run_rules() {  # run_rules <probe binary> <out dir> [env...]: one JSON per rule
  local probe="$1" dir="$2"; shift 2
  mkdir -p "$dir"
  local r
  for r in "${RULES[@]}"; do
    env -u CUDA_VISIBLE_DEVICES -u CUDA_DEVICE_ORDER "$@" GPULAB_STATE_DIR="$(mktemp -d)" timeout 300 "$probe" "$r" \
      >"$dir/$r.json" 2>"$dir/$r.err" || echo "{\"error\": \"probe exited with $?\"}" >"$dir/$r.json"
  done
}

# ---- 2. The real GPUs: cuda build, tests, probes -------------------------------------
REAL_DIR="$WORK/real"
TEST_SUMMARY="not run (--predict-from)"
if [ -z "$PREDICT_FROM" ]; then
  # A GPU nobody uses: processes NVML lists that this process cannot see (host pids, in
  # a container) are ours (NvmlObserver.cpp, GPULAB_NVML_SELF).
  if [ -z "$(nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null)" ]; then
    export GPULAB_NVML_SELF=unseen
  fi
  B="$BUILD/cuda"
  T0=$SECONDS
  say "configuring the cuda backend in $B (TORCH_CUDA_ARCH_LIST=$ARCH)"
  cmake -S "$ROOT" -B "$B" "${LEAN[@]}" -DGPULAB_BACKEND=cuda -DLIBTORCH_PREFIX="$TORCH" \
    -DTORCH_CUDA_ARCH_LIST="$ARCH" -DGPULAB_NVML_INCLUDE_DIR="$NVML_DIR" >"$WORK/cuda-configure.log" 2>&1 ||
    { tail -n 30 "$WORK/cuda-configure.log" >&2; say "configure failed"; exit 1; }
  say "building everything (cuda backend)"
  cmake_build "$B" "$WORK/cuda-build.log" || { say "cuda build failed: $WORK/cuda-build.log"; exit 1; }
  say "built in $((SECONDS - T0)) s; running the tests"
  T0=$SECONDS
  # The gate: lesson checks (they skip scenarios needing more GPUs) and the torch-free unit
  # tests. The sim and memory suites test the simulator's own model (node files, shared
  # node state); on real GPUs they run for information only.
  summary() { grep -E 'tests passed|tests failed' "$1" | tail -n 1 || echo 'ctest printed no summary'; }
  if (cd "$B" && ctest -j1 --output-on-failure --timeout 300 -L '^(lessons|unit)$') >"$WORK/cuda-ctest.log" 2>&1; then :; else status=1; fi
  (cd "$B" && ctest -j1 --output-on-failure --timeout 300 -L '^(sim|memory)$') >"$WORK/cuda-ctest-sim.log" 2>&1 || true
  skipped=$(grep -c '(Skipped)' "$WORK/cuda-ctest.log" || true)
  TEST_SUMMARY="lessons+unit: $(summary "$WORK/cuda-ctest.log"), $skipped skipped (fewer GPUs than the scenario needs); simulator suites (information only): $(summary "$WORK/cuda-ctest-sim.log") — in $((SECONDS - T0)) s"
  say "tests: $TEST_SUMMARY"
  run_probes "$B/bin/device-probe" "$REAL_DIR"
  run_rules "$B/bin/device-probe" "$REAL_DIR/rules"
fi

# ---- 3. The simulator's prediction for this machine ----------------------------------
NODE="$WORK/this-machine.json"
python3 - "$SMI_CSV" "$REAL_DIR/0.json" "$NODE" <<'PY'
import json, os, sys
csv, real, out = sys.argv[1:]
props = {}
if os.path.exists(real):
    try:
        props = json.load(open(real)).get("properties") or {}
    except ValueError:
        pass
# SM counts nvidia-smi does not print; the real probe's cudaGetDeviceProperties has them.
known_sms = {"H200": 132, "H100": 132, "A100": 108, "L40S": 142, "A10": 72, "T4": 40, "V100": 80}
gpus = []
for line in open(csv):
    f = [x.strip() for x in line.split(",")]
    if len(f) < 5:
        continue
    name, uuid, bus, mib, cc = f[:5]
    bus = bus.upper().replace("0X", "0x")
    dom, rest = bus.split(":", 1)
    sms = props.get("sm_count") or next((v for k, v in known_sms.items() if k in name), 1)
    gpus.append({"name": name, "uuid": uuid, "pci_bus_id": f"{int(dom, 16):08X}:{rest}",
                 "memory_mib": int(float(mib)), "compute_capability": cc, "sm_count": sms,
                 # gpulab's nodes assume 416 MiB (CUDA 12 lazy loading); the table shows the truth
                 "context_mib": int(os.environ.get("GPULAB_CONTEXT_MIB", "416"))})
gpus.sort(key=lambda g: g["pci_bus_id"])
json.dump({"name": "this-machine", "description": "generated by tools/device-check.sh from nvidia-smi",
           "gpus": gpus}, open(out, "w"), indent=2)
PY
S="$BUILD/sim"
T0=$SECONDS
say "configuring the simulated backend in $S (same LibTorch, CPU library only)"
cmake -S "$ROOT" -B "$S" "${LEAN[@]}" -DGPULAB_BACKEND=sim -DLIBTORCH_PREFIX="$TORCH" -DGPULAB_BUILD_TESTS=OFF \
  >"$WORK/sim-configure.log" 2>&1 || { tail -n 30 "$WORK/sim-configure.log" >&2; say "configure failed"; exit 1; }
cmake_build "$S" "$WORK/sim-build.log" device-probe || { say "sim build failed: $WORK/sim-build.log"; exit 1; }
say "simulator's probe built in $((SECONDS - T0)) s"
run_probes "$S/bin/device-probe" "$WORK/sim" GPULAB_NODE="$NODE"
# The simulator as the same build: the real profile's CUDA when the release shipped it (a
# pytorch.org cuXXX archive), else the release's PyPI build (the rules depend only on the
# CUDA major version).
REAL_CUDA=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("profile",{}).get("cuda",""))' \
  "$REAL_DIR/0.json" 2>/dev/null || true)
SIM_BUILD_ENV=()
if [ -n "$REAL_CUDA" ] && GPULAB_CUDA_BUILD="$REAL_CUDA" GPULAB_NODE="$NODE" GPULAB_STATE_DIR="$(mktemp -d)" \
     "$S/bin/device-probe" profile 2>/dev/null | grep -q '"name"'; then
  SIM_BUILD_ENV=(GPULAB_CUDA_BUILD="$REAL_CUDA")
fi
run_rules "$S/bin/device-probe" "$WORK/sim/rules" GPULAB_NODE="$NODE" "${SIM_BUILD_ENV[@]}"

# ---- 4. The table ---------------------------------------------------------------------
python3 - "$OUT" "$WORK" "$TEST_SUMMARY" "$TORCH" "${RULES[*]}" "${SCENARIOS[@]}" <<'PY'
import json, os, sys, datetime
out, work, tests, torch_prefix, rules, *scenarios = sys.argv[1:]
machine = [l.strip() for l in open(os.path.join(work, "nvidia-smi.csv")) if l.strip()]

def load(side, i):
    path = os.path.join(work, side, f"{i}.json")
    if not os.path.exists(path):
        return None
    try:
        result = json.load(open(path))
    except ValueError:
        result = {"error": open(path).read()[:200]}
    err = path[:-len(".json")] + ".err"
    if "error" in result and os.path.exists(err):  # why the probe did not run
        result["error"] += ": " + " ".join(open(err).read().split())[:300]
    return result

def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ").strip() or "—"

def visible(r):
    if r is None: return None
    v = r.get("visible") or {}
    if "count" not in v: return "error: " + str(v.get("error") or r.get("error"))
    return f"{v['count']} device(s): " + (", ".join(f"cuda:{d['cuda']}→GPU {d['physical']}" for d in v["devices"]) or "none")

def mib(b):
    return "?" if b is None else f"{b / 1048576:.0f} MiB"

rows = []
for i, s in enumerate(scenarios):
    label, value = s.split("|", 1)
    shown = "unset" if value == "UNSET" else f'"{value}"'
    sim, real = load("sim", i), load("real", i)
    rows.append((f"CUDA_VISIBLE_DEVICES={shown}", visible(sim), visible(real)))
sim0, real0 = load("sim", 0) or {}, load("real", 0)
def get(r, step, key):
    if r is None: return None
    if "error" in r: return "error: " + str(r["error"])
    d = r.get(step) or {}
    return d.get(key, "error: " + str(d.get("error"))) if d else None
def ctx(r):
    if r is None: return None
    if "error" in r: return "error: " + str(r["error"])
    c = r.get("context") or {}
    if not isinstance(c.get("process_bytes"), int): return "error: " + str(c.get("error"))
    return (f"{mib(c['context_bytes'])} (process {mib(c['process_bytes'])}, reserved {mib(c['reserved_bytes'])}, "
            f"device used +{mib(c['device_used_delta_bytes'])})")
rows.append(("context after the first allocation on cuda:0", ctx(sim0), ctx(real0)))
rows.append(("out of memory (1 GiB more than the GPU)", get(sim0, "oom", "message"), get(real0, "oom", "message")))
rows.append(("invalid ordinal: tensor on cuda:<count>", get(sim0, "ordinal", "tensor"), get(real0, "ordinal", "tensor")))
rows.append(("invalid ordinal: gpulab::cuda::set_device(<count>)", get(sim0, "ordinal", "set_device"), get(real0, "ordinal", "set_device")))

def profile(r):
    if r is None: return None
    p = r.get("profile") or {}
    return p["name"] if "name" in p else "error: " + str(p.get("error") or r.get("error"))
rows.insert(0, ("profile (linked PyTorch, CUDA runtime)", profile(sim0), profile(real0)))
described = {"rule_guard": "contexts inside c10::DeviceGuard(cuda:D) alone",
             "rule_guard_exit": "contexts after entering and leaving c10::DeviceGuard(cuda:D)",
             "rule_randn": "contexts after torch::randn({1}, cuda:D)",
             "rule_set_device": "contexts after set_device(D)",
             "rule_set_device0": "contexts after set_device(0) on a fresh thread"}
def rule(side, name):
    path = os.path.join(work, side, "rules", name + ".json")
    if not os.path.exists(path): return None
    try:
        r = json.load(open(path)).get(name) or {}
    except ValueError:
        return "error: " + open(path).read()[:200]
    if "contexts" not in r: return "error: " + str(r.get("error"))
    return f"D={r['device']} (GPU {r['physical_of_device']}): contexts on GPU(s) " + (", ".join(map(str, r["contexts"])) or "none")
for name in rules.split():
    rows.append((described.get(name, name), rule("sim", name), rule("real", name)))

with open(out, "w") as f:
    f.write("# Conformance: the simulator next to real GPUs\n\n")
    f.write("Written by `tools/device-check.sh` (docs/real-gpus.md); do not edit by hand.\n\n")
    f.write(f"- date: {datetime.date.today().isoformat()}\n")
    f.write(f"- GPUs (nvidia-smi): {'; '.join(machine)}\n")
    f.write(f"- LibTorch: {os.path.basename(os.path.dirname(torch_prefix))}/{os.path.basename(torch_prefix)}\n")
    f.write(f"- tests (cuda backend, ctest): {tests}\n")
    f.write("- simulator: the same probe built with GPULAB_BACKEND=sim on a node file made from the "
            "nvidia-smi line(s) above (context_mib 416, gpulab's assumption), as the same release's build "
            "(GPULAB_CUDA_BUILD, docs/reference.md, \"Profiles\")\n\n")
    f.write("| scenario | simulator (prediction) | real GPU (observed) | same |\n|---|---|---|---|\n")
    for what, sim, real in rows:
        same = "" if real is None else ("yes" if sim == real else "**no**")
        f.write(f"| {cell(what)} | {cell(sim)} | {cell(real if real is not None else 'not run')} | {same} |\n")
print(f"device-check: wrote {out}", file=sys.stderr)
PY
exit "$status"
