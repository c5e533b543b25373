#!/usr/bin/env bash
# The CUDA backend's check on a GPU machine (issue #5): runs a bundle made by bundle.sh and
# writes what it saw to $OUT, in at most about 8 minutes (every step under `timeout`, the whole
# run under one deadline).
#
#   packaging/device/check.sh BUNDLE [--budget SECONDS] [--repeat N]
#
# BUNDLE: the folder bundle.sh wrote, or its .tar.xz (unpacked into a temporary folder).
# Run from anywhere in the repository; on the device tool, for example:
#   run(command="packaging/device/check.sh build/device/bundle.tar.xz",
#       carry=["build/device/bundle.tar.xz"], timeout_s=540)
#
# Steps, each reported in summary.txt with its exit status and time:
#   1. the machine: nvidia-smi -L and nvidia-smi, the OS, Python's torch and its CUDA
#   2. cuBLAS for the module: from the CUDA toolkit, else from Python's nvidia-cublas wheel
#   3. ironlearn-cli devices: does the registry load the module and see the GPU?
#   4. testBackendOps (the bundled CPU backend; also proves the bundled libraries load)
#   5. testCudaParity: every op, recorded replays and training runs, CUDA against the CPU
#   6. compare_cuda.sh: ironlearn-bench --backend cuda next to torch_cuda_bench.py
# Files in $OUT (default ./device-out): summary.txt, system.txt, backend-ops.txt, parity.txt,
# compare.txt, bench-ours.json, bench-torch.json. A machine without a GPU or driver is reported
# (nvidia-smi missing, CUDA unavailable, the parity test skipped) and the script exits 1; it exits
# 0 only when every step passed.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
budget=470
repeat=10
bundle=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --budget) budget="$2"; shift 2 ;;
        --repeat) repeat="$2"; shift 2 ;;
        -h|--help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "check.sh: unknown option $1" >&2; exit 2 ;;
        *) bundle="$1"; shift ;;
    esac
done
if [[ -z "$bundle" ]]; then
    echo "usage: check.sh BUNDLE [--budget SECONDS] [--repeat N]" >&2
    exit 2
fi
OUT="${OUT:-$PWD/device-out}"
mkdir -p "$OUT"
summary="$OUT/summary.txt"
system="$OUT/system.txt"
: >"$summary"
: >"$system"
deadline=$((SECONDS + budget))
failures=0

note() { echo "$*" | tee -a "$summary"; }

# step NAME TIMEOUT LOG COMMAND...: runs COMMAND under timeout (never past the deadline),
# appending its output to LOG, and records the outcome. Returns the command's status.
step() {
    local name="$1" limit="$2" log="$3"
    shift 3
    local left=$((deadline - SECONDS - 5))
    if ((left < 5)); then
        note "SKIP  $name (the time budget of ${budget} s is spent)"
        failures=$((failures + 1))
        return 124
    fi
    ((limit > left)) && limit=$left
    local t0=$SECONDS
    echo "==== $name: $* (timeout ${limit} s)" >>"$log"
    timeout -k 5 "$limit" "$@" >>"$log" 2>&1
    local rc=$?
    local verdict=PASS
    if ((rc == 124 || rc == 137)); then
        verdict="TIME"
    elif ((rc != 0)); then
        verdict="FAIL"
    fi
    [[ $verdict == PASS ]] || failures=$((failures + 1))
    note "$(printf '%-5s %-28s rc=%-3d %4d s  -> %s' "$verdict" "$name" "$rc" $((SECONDS - t0)) "$(basename "$log")")"
    return $rc
}

# ---- the bundle ---------------------------------------------------------------------------------
if [[ -f "$bundle" ]]; then
    unpack="$(mktemp -d /tmp/ironlearn-bundle.XXXXXX)"
    trap 'rm -rf "$unpack"' EXIT
    if command -v xz >/dev/null 2>&1; then
        tar -C "$unpack" -xJf "$bundle"
    else
        python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
            "$bundle" "$unpack"
    fi || { note "FAIL  unpack $bundle"; exit 1; }
    bundle="$(find "$unpack" -mindepth 2 -maxdepth 2 -name env.sh -printf '%h\n' | head -1)"
fi
if [[ ! -f "$bundle/env.sh" || ! -x "$bundle/bin/ironlearn-bench" ]]; then
    note "FAIL  $bundle is not a bundle made by packaging/device/bundle.sh"
    exit 1
fi
bundle="$(cd "$bundle" && pwd)"
note "bundle: $bundle ($(head -1 "$bundle/MANIFEST.txt" 2>/dev/null))"

# ---- 1. the machine ---------------------------------------------------------------------------------
have_gpu=1
if command -v nvidia-smi >/dev/null 2>&1; then
    step "nvidia-smi -L" 20 "$system" nvidia-smi -L || have_gpu=0
    step "nvidia-smi" 20 "$system" nvidia-smi || true
else
    note "FAIL  nvidia-smi                   not found: no NVIDIA driver on this machine"
    failures=$((failures + 1))
    have_gpu=0
fi
{
    echo "==== system"
    uname -a
    (. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")
    ldd --version 2>&1 | head -1
    nproc
} >>"$system" 2>&1
step "python3 torch" 60 "$system" python3 -c '
import torch
print("torch", torch.__version__, "CUDA", torch.version.cuda, "available", torch.cuda.is_available())
if torch.cuda.is_available():
    print(torch.cuda.get_device_name(0), torch.cuda.get_device_capability(0))' || true

# ---- 2. cuBLAS for the module --------------------------------------------------------------------
module="$bundle/lib/libironlearn-cuda.so"
if [[ -f "$module" ]]; then
    (. "$bundle/env.sh" && ldd "$module") >>"$system" 2>&1
    if (. "$bundle/env.sh" && ldd "$module") 2>/dev/null | grep -q 'libcublas.*not found'; then
        # Not in the toolkit: PyTorch's wheels bring cuBLAS (nvidia/cu13/lib, nvidia/cublas/lib).
        extra="$(timeout 60 python3 - <<'EOF' 2>/dev/null
import glob, os, site, sys
roots = site.getsitepackages() + [site.getusersitepackages()]
for r in roots:
    for lib in sorted(glob.glob(os.path.join(r, "nvidia", "**", "libcublas.so.*"), recursive=True)):
        print(os.path.dirname(lib)); sys.exit(0)
EOF
)"
        if [[ -n "$extra" ]]; then
            export IRONLEARN_EXTRA_LIBS="$extra"
            note "note  cuBLAS is not in the CUDA toolkit here; using $extra"
        else
            note "FAIL  cuBLAS for $module not found (neither the toolkit nor Python's wheels)"
            failures=$((failures + 1))
        fi
    fi
else
    note "FAIL  the bundle has no CUDA module (built without the CUDA toolkit)"
    failures=$((failures + 1))
fi

# ---- 3-6. the programs --------------------------------------------------------------------------
step "ironlearn-cli devices" 30 "$system" "$bundle/bin/ironlearn-cli" devices
step "testBackendOps" 90 "$OUT/backend-ops.txt" "$bundle/bin/testBackendOps" -silent
step "testCudaParity" 240 "$OUT/parity.txt" "$bundle/bin/testCudaParity"
grep -E '^(Totals|SKIP|FAIL)' "$OUT/parity.txt" 2>/dev/null | head -20 | sed 's/^/      /' | tee -a "$summary"
if ((have_gpu)); then
    # Python keeps its own libraries: only the ironlearn launchers source env.sh.
    step "compare_cuda.sh" 240 "$OUT/compare.txt" env PYTHON=python3 \
        "$root/packaging/bench/compare_cuda.sh" --repeat "$repeat" --save "$OUT" \
        "$bundle/bin/ironlearn-bench"
    [[ -f "$OUT/ours.json" ]] && mv "$OUT/ours.json" "$OUT/bench-ours.json"
    [[ -f "$OUT/torch.json" ]] && mv "$OUT/torch.json" "$OUT/bench-torch.json"
else
    note "SKIP  compare_cuda.sh              no GPU"
    failures=$((failures + 1))
fi

# ---- summary -----------------------------------------------------------------------------------------
echo
[[ -f "$OUT/compare.txt" ]] && sed -n '/^workload/,$p' "$OUT/compare.txt"
echo
note "$( ((failures == 0)) && echo "all steps passed" || echo "$failures step(s) did not pass") in $SECONDS s; files in $OUT"
((failures == 0))
