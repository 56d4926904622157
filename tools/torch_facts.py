#!/usr/bin/env python3
"""Helper for tools/torch-facts.sh: read facts out of a released torch wheel.

usage: torch_facts.py VERSION OUT.json
       torch_facts.py --same-device VERSION OUT.json   (libtorch_cpu.so + the CUDA libraries)
Reads only the needed zip members of the PyPI wheel over HTTP Range requests
(URL + sha256 come from `pip install --dry-run --report` at run time), runs
binutils (strings/objdump/nm) on them and writes a pretty, key-sorted JSON
fixture. Progress goes to stderr. Deterministic: same wheel -> same bytes.
"""
import ast, io, json, os, re, subprocess, sys, tempfile, urllib.request, zipfile

def log(*a):
    print("torch-facts:", *a, file=sys.stderr, flush=True)

PATTERNS = ["out of memory", "total capac", "already allocated", "memory in use",
            "reserved by PyTorch", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF",
            "expandable_segments", "max_split_size_mb", "Memory Management",
            "private pool", "virtual address", "asynchronously reported",
            "CUDA_LAUNCH_BLOCKING", "TORCH_USE_CUDA_DSA", "Search for", "out of range",
            "docs.nvidia.com", "CUDA error", "non-PyTorch memory", "Process "]
MEMBERS = ["torch/version.py", "torch/cuda/__init__.py",
           "torch/lib/libc10_cuda.so", "torch/lib/libtorch_python.so"]
PIP_PLATFORMS = ["manylinux_2_28_x86_64", "manylinux_2_17_x86_64",
                 "manylinux2014_x86_64", "manylinux1_x86_64"]

# ---------------------------------------------------------------- wheel access
class HttpRangeFile(io.RawIOBase):
    """Minimal seekable reader over HTTP Range requests (for zipfile)."""
    def __init__(self, url):
        self.url, self.pos = url, 0
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD")) as r:
            self.size = int(r.headers["Content-Length"])
    def seekable(self): return True
    def readable(self): return True
    def tell(self): return self.pos
    def seek(self, off, whence=0):
        self.pos = off if whence == 0 else self.pos + off if whence == 1 else self.size + off
        return self.pos
    def readinto(self, b):
        n = min(len(b), self.size - self.pos)
        if n <= 0:
            return 0
        req = urllib.request.Request(self.url, headers={"Range": f"bytes={self.pos}-{self.pos + n - 1}"})
        with urllib.request.urlopen(req) as r:
            if r.status != 206:
                raise RuntimeError(f"server ignored Range request (HTTP {r.status})")
            data = r.read()
        b[:len(data)] = data
        self.pos += len(data)
        return len(data)

def pip_report(version, tmp):
    rep = os.path.join(tmp, "report.json")
    cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--no-deps",
           "--only-binary=:all:", "--python-version", "3.11", "--implementation", "cp",
           "--abi", "cp311"]
    for p in PIP_PLATFORMS:
        cmd += ["--platform", p]
    cmd += ["--target", os.path.join(tmp, "target"), "--quiet", "--disable-pip-version-check",
            "--report", rep, f"torch=={version}"]
    subprocess.run(cmd, check=True, stdout=sys.stderr)
    info = json.load(open(rep))["install"][0]["download_info"]
    return info["url"], info["archive_info"]["hashes"]["sha256"]

def extract(url, tmp):
    z = zipfile.ZipFile(io.BufferedReader(HttpRangeFile(url), buffer_size=1 << 20))
    out = {}
    for m in MEMBERS:
        p = os.path.join(tmp, os.path.basename(m))
        log(f"  reading {m} ({z.getinfo(m).compress_size} bytes compressed, CRC-checked)")
        with open(p, "wb") as f:
            f.write(z.read(m))  # zipfile verifies the member's CRC32
        out[m] = p
    return out

# ---------------------------------------------------------------- binutils
def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, errors="replace").stdout

def binary_strings(path):
    # strings -a -n 6 -w: whitespace (incl. newlines) kept inside a string; an unprintable
    # separator (\x1e\x1f) so embedded newlines survive
    out = subprocess.run(["strings", "-a", "-n", "6", "-w", "-s", "\x1e\x1f", path],
                         check=True, capture_output=True).stdout.decode("latin-1")
    return [s for s in out.split("\x1e\x1f") if s.strip()]

def matched_strings(strs):
    seen, res = set(), []
    for s in strs:
        if s.startswith("_Z"):
            continue  # mangled symbol names
        if any(p in s for p in PATTERNS) and s not in seen:
            seen.add(s)
            res.append(s)
    return res

FUNC_RE = re.compile(r"^([0-9a-f]+) <(.*)>:$")
INSN_RE = re.compile(r"^\s*([0-9a-f]+):\s*(\S+)\s*(.*)$")

def parse_functions(dis):
    funcs, cur = {}, None
    for line in dis.splitlines():
        m = FUNC_RE.match(line)
        if m:
            cur = m.group(2)
            funcs.setdefault(cur, [])
            continue
        m = INSN_RE.match(line)
        if m and cur is not None:
            funcs[cur].append((int(m.group(1), 16), m.group(2), m.group(3)))
    return funcs

TARGET_RE = re.compile(r"^[0-9a-f]+ <(.*)>$")
NOISE = re.compile(r"^(std::|operator |__tls_get_addr|_Unwind|__cxa_|strlen|memcpy|memmove|"
                   r"c10::cuda::CUDAErrorLogCapture::CUDAErrorLogCapture)")

def call_sequence(fname, insns):
    seq = []
    for addr, op, arg in insns:
        if op not in ("call", "jmp"):
            continue
        m = TARGET_RE.match(arg.split("#")[0].strip())
        if not m:
            continue
        t = m.group(1)
        if t.startswith(fname) or "[clone" in t:
            continue  # branch inside the function / its cold part
        if op == "jmp" and "+0x" in t:
            continue
        t = t.replace("@plt", "")
        if NOISE.match(t):
            continue
        seq.append(("tail:" if op == "jmp" else "") + t)
    return seq

def skips_current_device(insns):
    """cudaGetDevice ... cmp ... je/jne over a later cudaSetDevice call."""
    calls = [(a, arg) for a, op, arg in insns if op in ("call", "jmp")]
    get = [a for a, arg in calls if "<cudaGetDevice" in arg]
    sets = [a for a, arg in calls if "<cudaSetDevice" in arg]
    if not get:
        return False
    g = get[0]
    for i, (a, op, arg) in enumerate(insns):
        if a > g and op in ("je", "jne") and i > 0 and insns[i - 1][1].startswith("cmp"):
            tgt = int(arg.split()[0], 16)
            if any(a < s < tgt for s in sets):
                return True
    return False

def force_first(insns):
    """A bool test that branches to cudaSetDevice before cudaGetDevice is called."""
    g = next((a for a, op, arg in insns if op == "call" and "<cudaGetDevice" in arg), None)
    for i, (a, op, arg) in enumerate(insns):
        if g is not None and a >= g:
            break
        if op in ("jne", "je") and insns[i - 1][1] == "test" and re.search(r"%(bpl|sil|r\d+b|[a-d]l)", insns[i - 1][2]):
            return True
    return False

ERR_FUNCS = ("c10::cuda::c10_cuda_check_implementation(", "c10::cuda::get_cuda_check_suffix(",
             "c10::cuda::get_cuda_error_help", "c10::cuda::get_cuda_async_error_suffix(")

def error_code_checks(funcs):
    res = {}
    for name, insns in funcs.items():
        if not name.startswith(ERR_FUNCS) or "@plt" in name or "[clone" in name:
            continue
        codes = set()
        sub = None
        for i, (a, op, arg) in enumerate(insns):
            m = re.match(r"\$0x([0-9a-f]+),%(e[a-z]+|r\d+d)$", arg)
            if op == "sub" and m and int(m.group(1), 16) >= 100:
                sub = int(m.group(1), 16)
            if op == "cmp" and m and m.group(2) in ("edi", "esi"):
                v = int(m.group(1), 16)
                if sub is not None and v < 64:
                    continue  # after `sub $CODE`: the bound of a bit-test switch's range (decoded below), not a code
                if v >= 2:
                    codes.add(v)
            if op == "bt" and sub is not None:
                mm = re.match(r"\$0x([0-9a-f]+),%(\w+)$", insns[i - 1][2]) if i else None
                if mm:
                    mask = int(mm.group(1), 16)
                    codes |= {sub + b for b in range(64) if mask >> b & 1}
        if codes:
            res[name] = sorted(codes)
    return res

def inline_fragments(funcs, names):
    """Text stored as movabs immediates (short std::string literals built in code)."""
    res = {}
    for name, insns in funcs.items():
        if not name.startswith(names) or "@plt" in name:
            continue
        frags = []
        for a, op, arg in insns:
            m = re.match(r"\$0x([0-9a-f]+),", arg)
            if op == "movabs" and m:
                b = int(m.group(1), 16).to_bytes(8, "little")
                if all(32 <= c < 127 or c == 10 for c in b):
                    frags.append(b.decode())
        if frags:
            res[name] = frags
    return res

def c10_cuda_facts(path):
    dis = run("objdump", "-d", "-C", "--no-show-raw-insn", path)
    funcs = parse_functions(dis)
    wanted = re.compile(r"^c10::cuda::(SetDevice|MaybeSetDevice|ExchangeDevice|MaybeExchangeDevice|set_device)\(")
    seqs, skip, force = {}, None, False
    for name in sorted(funcs):
        if wanted.match(name) and "@plt" not in name and "[clone" not in name:
            seqs[name] = call_sequence(name, funcs[name])
            if name.startswith("c10::cuda::SetDevice("):
                force = force or ("bool" in name and force_first(funcs[name]))
                skip = skips_current_device(funcs[name]) if skip is None else (skip or skips_current_device(funcs[name]))
    if skip is None:  # no SetDevice wrapper: set_device itself
        sd = [n for n in seqs if n.startswith("c10::cuda::set_device(")]
        skip = any(skips_current_device(funcs[n]) for n in sd)
    return {
        "device_functions": seqs,
        "set_device_skips_current_device": bool(skip),
        "set_device_has_force": any("bool" in n for n in seqs if n.startswith(("c10::cuda::SetDevice(", "c10::cuda::set_device("))),
        "set_device_force_branch_before_cudaGetDevice": force,
        "maybe_set_device_checks_primary_context": any("hasPrimaryContext" in c for n, s in seqs.items() if n.startswith("c10::cuda::MaybeSetDevice(") for c in s),
        "error_code_checks": error_code_checks(funcs),
        "inline_text_fragments": inline_fragments(funcs, ERR_FUNCS),
        "check_impl_call_sequence": {n: call_sequence(n, i) for n, i in funcs.items()
                                     if n.startswith("c10::cuda::c10_cuda_check_implementation(") and "@plt" not in n and "[clone" not in n},
    }

def python_binding_facts(path):
    syms = run("nm", "-S", "-C", path)
    m = next((l for l in syms.splitlines() if re.search(r" [tT] THCPModule_setDevice_wrap\(_object\*, _object\*\)$", l)), None)
    if not m:
        return {"python_set_device_function": None, "python_set_device_forces": None}
    addr, size = (int(x, 16) for x in m.split()[:2])
    dis = run("objdump", "-d", "-C", "--no-show-raw-insn", f"--start-address={addr}",
              f"--stop-address={addr + size}", path)
    insns = [(int(a.group(1), 16), a.group(2), a.group(3)) for a in map(INSN_RE.match, dis.splitlines()) if a]
    for i, (a, op, arg) in enumerate(insns):
        if op in ("call", "jmp") and re.search(r"<c10::cuda::(set_device|SetDevice)\(", arg):
            callee = TARGET_RE.match(arg.strip()).group(1).replace("@plt", "")
            esi = None
            for _, op2, arg2 in reversed(insns[max(0, i - 6):i]):
                if re.search(r",%(esi|sil)$", arg2):
                    esi = arg2.split(",")[0] if op2 == "mov" else ("$0x0" if op2 == "xor" else op2 + " " + arg2)
                    break
            takes_bool = "bool" in callee
            return {"python_set_device_function": "THCPModule_setDevice_wrap",
                    "python_set_device_callee": callee,
                    "python_set_device_second_arg": esi if takes_bool else None,
                    "python_set_device_forces": (esi == "$0x1") if takes_bool else False}
    return {"python_set_device_function": "THCPModule_setDevice_wrap", "python_set_device_forces": None}

# ---------------------------------------------------------------- python sources
def version_facts(path):
    tree = ast.parse(open(path).read())
    vals = {}
    for node in tree.body:
        tgt = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        if isinstance(tgt, ast.Name) and isinstance(getattr(node, "value", None), ast.Constant):
            vals[tgt.id] = node.value.value
    return {"__version__": vals.get("__version__"), "cuda": vals.get("cuda"), "git_version": vals.get("git_version")}

def cuda_init_facts(path):
    src = open(path).read()
    tree = ast.parse(src)
    fns = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in ("device_count", "set_device", "_check_stray_context", "_device_count_nvml"):
            start = min([d.lineno for d in node.decorator_list] + [node.lineno])
            fns[node.name] = "\n".join(src.splitlines()[start - 1:node.end_lineno]) + "\n"
    dc = fns.get("device_count", "")
    i_nvml, i_rt = dc.find("_device_count_nvml("), dc.find("_cuda_getDeviceCount(")
    stray_lines = [l.strip() for l in src.splitlines() if "TORCH_CUDA_CHECK_STRAY_CONTEXT" in l]
    nvml_users = sorted({n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
                         and n.name != "_device_count_nvml" and "_device_count_nvml(" in ast.get_source_segment(src, n)})
    return {
        "python": fns,
        "python_stray_context_env_lines": stray_lines,
        "python_device_count_nvml_callers": nvml_users,
        "device_count_asks_nvml_first": i_nvml >= 0 and (i_rt < 0 or i_nvml < i_rt),
        "device_count_caches_only_after_init": bool(re.search(r"if _initialized:\s*\n\s*_cached_device_count\s*=", dc)),
        "device_count_lru_cache": "lru_cache" in dc,
        "has_check_stray_context": "_check_stray_context" in fns,
    }

# ---------------------------------------------------------------- curated upstream data
# Read by hand with the session's code-search tools (see README "Provenance"); the
# binary facts above are independent of it.
MATRIX_SRC = ("RELEASE.md 'Release Compatibility Matrix' of pytorch/pytorch. The copy of "
              "pytorch/pytorch RELEASE.md stored in the code index (commit 009db1f7e41f) predates "
              "the matrix; rows were read from index copies of the same file (the newest copy's "
              "newest row is 2.14). Columns: Stable CUDA / Experimental CUDA.")
MATRIX = {  # minor -> (stable, experimental)
    "1.13": (["11.6"], ["11.7"]), "2.0": (["11.7"], ["11.8"]), "2.1": (["11.8"], ["12.1"]),
    "2.2": (["11.8"], ["12.1"]), "2.3": (["11.8"], ["12.1"]), "2.5": (["11.8", "12.1", "12.4"], []),
    "2.7": (["11.8", "12.6"], ["12.8"]), "2.8": (["12.6", "12.8"], ["12.9"]),
    "2.9": (["12.6", "12.8"], ["13.0"]), "2.10": (["12.6", "12.8"], ["13.0"]),
    "2.11": (["12.6", "12.8", "13.0"], []),
}
UPSTREAM_MAYBESETDEVICE = (
    "#if CUDA_VERSION >= 12000\n...\ncudaError_t MaybeSetDevice(DeviceIndex device) {\n"
    "  if (hasPrimaryContext(device)) {\n    return c10::cuda::SetDevice(device);\n  }\n"
    "  targetDeviceIndex = device;\n  return cudaSuccess;\n}\n...\n#endif\n")

def cuda_builds(version, default):
    minor = ".".join(version.split(".")[:2])
    if minor not in MATRIX:
        return ({"stable": None, "experimental": None, "pypi_default": default,
                 "note": "release not in any matrix copy available to the generator; pypi_default from torch/version.py"},
                "none found (see note)")
    st, ex = MATRIX[minor]
    return ({"stable": st, "experimental": ex, "pypi_default": default,
             "pypi_default_in_matrix": default in st + ex}, MATRIX_SRC)

# ---------------------------------------------------------------- layouts
def piece(text, strs_all):
    src = "binary" if any(text in s for s in strs_all) else "upstream"
    return {"text": text, "from": src}

def value(name, note=None):
    d = {"value": name}
    if note:
        d["note"] = note
    return d

def oom_layout(strs, strs_all):
    P = lambda t: piece(t, strs_all)
    has = lambda t: any(t in s for s in strs_all)
    if has(" already allocated; "):  # 1.x / 2.0 form
        tail = next(s for s in strs if s.startswith(" If reserved memory is >>"))
        return [P("CUDA out of memory. Tried to allocate "), value("format_size(alloc_size)"),
                P(" (GPU "), value("device"), P("; "), value("format_size(device_total)"),
                P(" total capacity; "), value("format_size(allocated_bytes)"), P(" already allocated; "),
                value("format_size(device_free)"), P(" free; "),
                value("allowed_info", "\"\" or format_size(allowed_memory_maximum) + \" allowed; \" (set_per_process_memory_fraction)"),
                value("format_size(reserved_bytes)"), P(" reserved in total by PyTorch)"), P(tail)]
    total = " has a total capacty of " if has(" has a total capacty of ") else " has a total capacity of "
    lay = [P("CUDA out of memory. Tried to allocate "), value("format_size(alloc_size)"), P(". GPU "),
           value("device"), P(total), value("format_size(device_total)"), P(" of which "),
           value("format_size(device_free)"), P(" is free. "),
           value("proc_info", "per NVML process: (\"Including non-PyTorch memory, this process\" | \"Process \" + pid) + \" has \" + format_size(used) + \" memory in use. \""),
           value("allowed_info", "\"\" or format_size(allowed_memory_maximum) + \" allowed; \""),
           P("Of the allocated memory ")]
    if has(" allocated in private pools (e.g., CUDA Graphs), "):
        lay += [value("format_size(allocated_bytes + allocated_in_private_pools)"), P(" is allocated by PyTorch, "),
                value("private_pool_msg", "\"\" or \"with \" + format_size(allocated_in_private_pools) + \" allocated in private pools (e.g., CUDA Graphs), \""),
                P("and ")]
    else:
        lay += [value("format_size(allocated_bytes)"), P(" is allocated by PyTorch, and ")]
    lay += [value("format_size(reserved_bytes - allocated_bytes[ - allocated_in_private_pools])"),
            P(" is reserved by PyTorch but unallocated.")]
    tail = [s for s in strs if "to avoid fragmentation" in s]
    t = tail[0] if tail else ""
    if t.startswith(" If reserved"):
        lay.append(P(t[:t.index(" (https") if " (https" in t else len(t)]) if False else P(t))
    else:
        lay += [P(" If reserved but unallocated memory is large try setting"), P(t)]
    if has("virtual address space (VSZ)"):
        lay.insert(len(lay) - 1, value("expandable-segment notes", "extra sentences when expandable segments are involved (see strings with 'virtual address')"))
    return lay

def cuda_error_layout(strs, strs_all, c10):
    has = lambda t: any(t in s for s in strs_all)
    susp = [s for s in strs if "asynchronously reported" in s]
    sfx = susp[0] if susp else None
    if sfx and not sfx.startswith("\n"):
        sfx = "\n" + sfx
    if sfx and "CUDA_LAUNCH_BLOCKING=1" not in sfx:
        tail = next((s for s in strs if s.startswith("For debugging consider passing")), "")
        sfx = sfx + "\n" + tail
    check_calls = next(iter(c10["check_impl_call_sequence"].values()), [])
    help_fn = any("get_cuda_error_help" in c for c in check_calls)
    async_fn = any("get_cuda_async_error_suffix" in c for c in check_calls)
    dsa = has("Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertio")
    base = [piece("CUDA error: ", strs_all) if has("CUDA error: ") else {"text": "CUDA error: ", "from": "upstream"},
            value("cudaGetErrorString(err)")]
    def build(kind, blocking):
        out = list(base)
        if help_fn:
            if kind == "101":
                out.append(piece("\nGPU device may be out of range, do you have enough GPUs?", strs_all) | {"from": "binary (16-byte merged literal, see README)" if not has("do you have enough GPUs?") else "binary"})
            else:
                out += [{"text": "\nSearch for `", "from": "binary (movabs immediates in get_cuda_error_help)"}, value("cudaGetErrorName(err)"),
                        piece("' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information.", strs_all)]
        async_codes = [700, 710, 715, 716, 719]
        if async_fn:
            if kind == "async" and not blocking:
                out.append({"text": sfx, "from": "binary", "when": f"err in {async_codes}"})
        elif not blocking:
            out.append({"text": sfx, "from": "binary"})
        if dsa:
            out += [{"text": "\n", "from": "upstream"},
                    {"text": "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n",
                     "from": "binary (prefix) + upstream (ending)",
                     "note": "c10_retrieve_device_side_assertion_info() when built without TORCH_USE_CUDA_DSA"}]
        if async_fn:
            out.append(value("CUDAErrorLogCapture::get_error_log_suffix()", "captured CUDA driver log, empty unless present"))
        return out
    lay = {"generic": build("generic", False), "generic_with_CUDA_LAUNCH_BLOCKING=1": build("generic", True)}
    if help_fn:
        lay["error_101_invalid_device"] = build("101", False)
    if async_fn:
        lay["async_error_700_710_715_716_719"] = build("async", False)
        lay["async_error_with_CUDA_LAUNCH_BLOCKING=1"] = build("async", True)
    lay["_note"] = ("Concatenate 'text' and values in order. TORCH_CHECK/C10 then adds its own "
                    "location/backtrace lines after this message (not part of the layout).")
    return lay

# ---------------------------------------------------------------- main
# ---------------------------------------------------------------- same-device facts
# The "Expected all tensors to be on the same device" texts and the generated CUDA
# wrappers' method names (tests/fixtures/torch-facts/same-device/VERSION.json).
SAME_DEVICE_KEYS = [b"Expected all tensors to be on the same device", b"(when checking arg",
                    b", different from other tensors on "]
# short pieces of adaption.cpp's messages: recorded only as whole literals of their own
SAME_DEVICE_EXACT = [b" in method ", b" is on ", b" and "]
SAME_DEVICE_OPS = {  # op -> the name part its generated wrapper may carry
    "addmm": "addmm", "mm": "mm", "add.Tensor": "add", "mul.Tensor": "mul", "cat": "cat",
    "index_select": "index_select", "embedding": "embedding"}
WRAPPER_RE = re.compile(rb"\x00(wrapper_(?:CUDA_)?_?(?:Tensor_)?(addmm|mm|add|mul|cat|index_select|embedding)(?:_Tensor)?)\x00")
SOURCE_RE = re.compile(rb"aten/src/ATen/[A-Za-z0-9_/]+\.(?:cpp|h)")

def cuda_members(z):
    """libtorch_cuda.so, or (1.13: libtorch_cuda.so is a stub) its two halves."""
    if z.getinfo("torch/lib/libtorch_cuda.so").file_size > 10 << 20:
        return ["torch/lib/libtorch_cuda.so"]
    return [m for m in ("torch/lib/libtorch_cuda_cpp.so", "torch/lib/libtorch_cuda_cu.so") if m in z.namelist()]

def extract_to(z, member, tmp):
    p = os.path.join(tmp, os.path.basename(member))
    log(f"  reading {member} ({z.getinfo(member).compress_size} bytes compressed, CRC-checked)")
    with z.open(member) as src, open(p, "wb") as dst:  # zipfile checks the CRC32 at the end
        while True:
            chunk = src.read(1 << 22)
            if not chunk:
                break
            dst.write(chunk)
    return p

def nul_strings_with(path, keys):
    """NUL-terminated literals containing one of keys, binary order, each with the first
    aten/src/ATen source path stored within 512 bytes after it (the TORCH_CHECK's file)."""
    import mmap
    res, seen = [], set()
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        hits = []
        for key in keys:
            i = m.find(key)
            while i != -1:
                hits.append(i)
                i = m.find(key, i + 1)
        for exact in SAME_DEVICE_EXACT:
            i = m.find(b"\x00" + exact + b"\x00")
            if i != -1:
                hits.append(i + 1)
        for i in sorted(hits):
            start, end = m.rfind(b"\x00", 0, i) + 1, m.find(b"\x00", i)
            text = m[start:end].decode("latin-1")
            if text in seen:
                continue
            seen.add(text)
            src = SOURCE_RE.search(m[end:end + 512])
            res.append({"text": text, "followed_by_source": src.group(0).decode() if src else None})
    return res

def wrapper_names(path):
    import mmap
    found = {}
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        for hit in WRAPPER_RE.finditer(m):
            found.setdefault(hit.group(2).decode(), set()).add(hit.group(1).decode())
    return found

def same_device_main(version, out):
    with tempfile.TemporaryDirectory(prefix="torch-facts-") as tmp:
        log(f"asking pip for torch=={version} (cp311, manylinux x86_64)")
        url, sha = pip_report(version, tmp)
        wheel = url.rsplit("/", 1)[-1]
        log(f"wheel {wheel} sha256 {sha}")
        z = zipfile.ZipFile(io.BufferedReader(HttpRangeFile(url), buffer_size=1 << 20))
        cpu = extract_to(z, "torch/lib/libtorch_cpu.so", tmp)
        literals = nul_strings_with(cpu, SAME_DEVICE_KEYS)
        os.remove(cpu)
        names, read = {}, ["torch/lib/libtorch_cpu.so"]
        # TORCH_FACTS_CPU_ONLY=1: the message pieces alone (to find a release boundary cheaply)
        for member in ([] if os.environ.get("TORCH_FACTS_CPU_ONLY") == "1" else cuda_members(z)):
            p = extract_to(z, member, tmp)
            for op, found in wrapper_names(p).items():
                names.setdefault(op, set()).update(found)
            os.remove(p)
            read.append(member)
    methods = {}
    for op, part in SAME_DEVICE_OPS.items():
        overload = op.split(".")[1] if "." in op else ""
        cands = sorted(names.get(part, ()))
        # an overload's wrapper ends in its overload name (wrapper_CUDA_add_Tensor)
        methods[op] = [c for c in cands if c.endswith("_" + overload)] if overload else \
                      [c for c in cands if c.endswith("_" + part)]
    fx = {
        "schema": 1,
        "release": version,
        "wheel": {"file": wheel, "sha256": sha,
                  "selection": "pip --dry-run --report, cp311, platforms " + ", ".join(PIP_PLATFORMS)},
        "members_read": read,
        "libtorch_cpu_literals": literals,
        "cuda_wrapper_method_names": methods if len(read) > 1 else None,
    }
    with open(out + ".tmp", "w") as f:
        json.dump(fx, f, indent=2, sort_keys=True, ensure_ascii=False)
        f.write("\n")
    os.replace(out + ".tmp", out)
    log(f"wrote {out}")

def main():
    version, out = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="torch-facts-") as tmp:
        log(f"asking pip for torch=={version} (cp311, manylinux x86_64)")
        url, sha = pip_report(version, tmp)
        wheel = url.rsplit("/", 1)[-1]
        log(f"wheel {wheel} sha256 {sha}")
        files = extract(url, tmp)
        log("strings / objdump / nm on libc10_cuda.so")
        strs_all = binary_strings(files["torch/lib/libc10_cuda.so"])
        strs = matched_strings(strs_all)
        c10 = c10_cuda_facts(files["torch/lib/libc10_cuda.so"])
        log("objdump on libtorch_python.so (THCPModule_setDevice_wrap)")
        pyb = python_binding_facts(files["torch/lib/libtorch_python.so"])
        ver = version_facts(files["torch/version.py"])
        cin = cuda_init_facts(files["torch/cuda/__init__.py"])
    builds, builds_src = cuda_builds(version, ver["cuda"])
    has = lambda t: any(t in s for s in strs_all)
    fx = {
        "schema": 1,
        "release": version,
        "wheel": {"file": wheel, "sha256": sha,
                  "selection": "pip --dry-run --report, cp311, platforms " + ", ".join(PIP_PLATFORMS)},
        "version_py": ver,
        "libc10_cuda": {"strings": strs, **c10},
        "libtorch_python": pyb,
        "python_set_device_forces": pyb.get("python_set_device_forces"),
        "set_device_skips_current_device": c10["set_device_skips_current_device"],
        "set_device_has_force": c10["set_device_has_force"],
        "cuda_init_py": cin,
        "cuda_builds": builds,
        "cuda_builds_source": builds_src,
        "summary": {
            "cuda_default": ver["cuda"],
            "oom_form": ("A" if has(" already allocated; ") else "B" if has(" has a total capacty of ")
                         else "E" if has("docs.pytorch.org/docs/stable/notes/cuda.html") else
                         "D" if has(" PYTORCH_ALLOC_CONF=expandable_segments") else
                         "C" if has(" PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True") else
                         "B2(max_split_size_mb tail)"),
            "oom_private_pools": has(" allocated in private pools"),
            "oom_virtual_address_variants": has("virtual address space"),
            "suffix_text": next((s for s in strs if "asynchronously reported" in s), None),
            "suffix_ends_with_full_stop": has("CUDA_LAUNCH_BLOCKING=1."),
            "dsa_line_present": has("Compile with `TORCH_USE_CUDA_DSA`"),
            "help_line_present": any("get_cuda_error_help" in c for seq in c10["check_impl_call_sequence"].values() for c in seq),
            "async_text_only_for_codes": c10["error_code_checks"].get("c10::cuda::get_cuda_async_error_suffix(cudaError)"),
        },
        "oom_layout": oom_layout(strs, strs_all),
        "cuda_error_layout": cuda_error_layout(strs, strs_all, c10),
    }
    if ver["cuda"] and ver["cuda"].split(".")[0] >= "12" and tuple(map(int, version.split(".")[:2])) >= (2, 1):
        fx["upstream"] = {"MaybeSetDevice": {
            "snippet": UPSTREAM_MAYBESETDEVICE,
            "file": "c10/cuda/CUDAFunctions.cpp",
            "revision": f"wanted v{version}; NOT tag-pinned: text from an index copy (pytorch/pytorch "
                        "snapshot too large to fetch here). Set TORCH_FACTS_PYTORCH_GIT to pin it.",
            "binary_agrees": c10["maybe_set_device_checks_primary_context"]}}
        gitdir = os.environ.get("TORCH_FACTS_PYTORCH_GIT")
        if gitdir:
            src = run("git", "--git-dir", gitdir, "show", f"v{version}:c10/cuda/CUDAFunctions.cpp")
            m = re.search(r"#if CUDA_VERSION >= 12000.*?#endif", src, re.S)
            fx["upstream"]["MaybeSetDevice"].update(snippet=m.group(0) + "\n" if m else None, revision=f"v{version}")
    with open(out + ".tmp", "w") as f:
        json.dump(fx, f, indent=2, sort_keys=True, ensure_ascii=False)
        f.write("\n")
    os.replace(out + ".tmp", out)
    log(f"wrote {out}")

if __name__ == "__main__":
    if sys.argv[1] == "--same-device":
        same_device_main(sys.argv[2], sys.argv[3])
    else:
        main()
