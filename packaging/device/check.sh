#!/usr/bin/env bash
# The CUDA backend's check on a GPU machine: runs a bundle made by bundle.sh and writes what it
# saw to $OUT as it goes, in at most 300 s by default (every step under `timeout`, the whole run
# under one deadline), so that a session's 15 device minutes leave room for a machine start and
# a second try.
#
#   packaging/device/check.sh BUNDLE [--budget SECONDS] [--repeat N]
#
# BUNDLE: the folder bundle.sh wrote, or its .tar.xz (unpacked into a temporary folder).
# Run from anywhere in the repository; on the device tool, for example:
#   run(command="packaging/device/check.sh build/device/bundle.tar.xz",
#       carry=["build/device/bundle.tar.xz"], timeout_s=330)
#
# 0. Preflight, about 15 s, stopping at the first problem with the reason:
#    the device's glibc against the newest version the bundle needs (REQUIRES.txt), the CUDA
#    toolkit libraries the module links (cuBLAS) found on the device, and
#    `ironlearn-cli devices --require cuda` (the module loads, the driver and a GPU answer; the
#    module is not the CPU emulation), then `testCudaParity deviceInfo` (30 s at most: a first
#    dense-layer product runs on the GPU, and the device details it leaves).
#    On a machine without a GPU the check ends here, exit status 1, in seconds.
# 1. testCudaParity with IRONLEARN_REQUIRE_CUDA=1 (a missing GPU fails, never skips): every op,
#    recorded replays and training runs, CUDA against the CPU; then a few of them again with
#    IRONLEARN_CUDA_POOL=0 (plain cudaMalloc, as where the driver has no stream-ordered pools).
# 2. compare_cuda.sh: ironlearn-bench --backend cuda next to torch_cuda_bench.py; then our SIREN
#    steps again with IRONLEARN_CUDA_EPILOGUE=0 (does folding the bias into the GEMM win?); then
#    both JSONs must show the timed steps ran as recordings (CUDA graphs), none fell back.
#    testCudaParity fails too when a training run's recording fell back to direct ops.
# 3. compute-sanitizer on a few op-level parity functions (when the toolkit has it): memcheck
#    with IRONLEARN_CUDA_POOL=0, racecheck, synccheck, initcheck. Last: what a tight budget skips.
# Files in $OUT (default ./device-out), at most five, because the device tool returns at most
# eight: summary.txt (a line per step), logs.tar.gz (every step's log, system.txt and
# devices.txt; re-packed as each step ends, so a run cut short still returns what it saw),
# bench-ours.json, bench-torch.json, bench-noepilogue.json (each valid JSON or absent).
# Exits 0 only when every step passed.
#
# A dry run without a GPU, against the CUDA emulation (tests/cudaemu) and the stand-in driver:
#   OUT=/tmp/dry IRONLEARN_CHECK_DRY_RUN=1 LD_LIBRARY_PATH=build/release/tests/fakecuda \
#   IRONLEARN_CUDA_MODULE=$PWD/build/release/tests/cudaemu/libironlearn-cuda-emu.so \
#   packaging/device/check.sh BUNDLE
# runs every step's command line for real (parity steps pass in ~85 s; the benchmarks fail:
# no CUDA PyTorch, and the emulation is far too slow for them). IRONLEARN_EMU_CAPTURE_FAILS=1
# plants a failing graph capture there: the parity step must then FAIL.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
budget=300
repeat=5
bundle=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --budget) budget="$2"; shift 2 ;;
        --repeat) repeat="$2"; shift 2 ;;
        -h|--help) sed -n '2,/^set -uo pipefail/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
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
# The logs live outside $OUT and travel back as one archive.
LOGS="$(mktemp -d /tmp/ironlearn-check-logs.XXXXXX)"
system="$LOGS/system.txt"
: >"$summary"
: >"$system"
trap 'rm -rf "$LOGS"' EXIT
pack_logs() { tar -C "$LOGS" -czf "$OUT/logs.tar.gz.part" . && mv "$OUT/logs.tar.gz.part" "$OUT/logs.tar.gz"; }
deadline=$((SECONDS + budget))
failures=0

note() { echo "$*" | tee -a "$summary"; }
# The preflight's verdict: the reason, and the end of the check.
stop() {
    note "FAIL  preflight: $*"
    note "stopped at the preflight after $SECONDS s; files in $OUT"
    pack_logs
    exit 1
}

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
    pack_logs
    return $rc
}

# ---- the bundle ---------------------------------------------------------------------------------
if [[ -f "$bundle" ]]; then
    unpack="$(mktemp -d /tmp/ironlearn-bundle.XXXXXX)"
    trap 'rm -rf "$unpack" "$LOGS"' EXIT
    if command -v xz >/dev/null 2>&1; then
        tar -C "$unpack" -xJf "$bundle"
    else
        python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
            "$bundle" "$unpack"
    fi || stop "could not unpack $bundle"
    bundle="$(find "$unpack" -mindepth 2 -maxdepth 2 -name env.sh -printf '%h\n' | head -1)"
fi
if [[ ! -f "$bundle/env.sh" || ! -x "$bundle/bin/ironlearn-cli" ]]; then
    stop "$bundle is not a bundle made by packaging/device/bundle.sh"
fi
bundle="$(cd "$bundle" && pwd)"
note "bundle: $bundle ($(head -1 "$bundle/MANIFEST.txt" 2>/dev/null))"

# ---- 0. preflight --------------------------------------------------------------------------------
{
    echo "==== system"
    uname -a
    (. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")
    ldd --version 2>&1 | head -1
    nproc
    timeout 5 nvidia-smi -L 2>&1 || echo "nvidia-smi: not found or no answer"
} >>"$system" 2>&1

# version_ge A B: A >= B, for dotted versions.
version_ge() { [[ "$(printf '%s\n%s\n' "$1" "$2" | sort -t. -k1,1n -k2,2n -k3,3n | head -1)" == "$2" ]]; }

requires="$bundle/REQUIRES.txt"
[[ -f "$requires" ]] || stop "$bundle has no REQUIRES.txt (made by an older bundle.sh)"
glibc_needed="$(sed -n 's/^glibc //p' "$requires")"
glibc_here="$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')"
[[ -n "$glibc_here" ]] || glibc_here="$(ldd --version 2>/dev/null | head -1 | grep -o '[0-9]*\.[0-9]*$')"
if [[ -n "$glibc_needed" && "$glibc_needed" != unknown ]]; then
    version_ge "$glibc_here" "$glibc_needed" ||
        stop "the bundle needs glibc $glibc_needed; this machine has ${glibc_here:-an unknown one} (build the bundle on an older system)"
fi
note "ok    glibc: the bundle needs ${glibc_needed:-?}, this machine has $glibc_here"

# The toolkit libraries the module links: the device's own (ld.so cache, the toolkit, or the
# nvidia-* Python wheels PyTorch brings; 5 s at most for Python).
while read -r lib; do
    [[ -n "$lib" ]] || continue
    found="$(ldconfig -p 2>/dev/null | awk -v l="$lib" '$1 == l { print $NF; exit }')"
    for d in "${CUDA_HOME:-/usr/local/cuda}/lib64" /usr/local/cuda/targets/x86_64-linux/lib; do
        [[ -z "$found" && -e "$d/$lib" ]] && found="$d/$lib"
    done
    if [[ -z "$found" ]]; then
        found="$(timeout 5 python3 - "$lib" <<'EOF' 2>/dev/null
import glob, os, site, sys
for r in site.getsitepackages() + [site.getusersitepackages()]:
    for path in sorted(glob.glob(os.path.join(r, "nvidia", "**", sys.argv[1]), recursive=True)):
        print(path); sys.exit(0)
EOF
)"
        [[ -n "$found" ]] && export IRONLEARN_EXTRA_LIBS="${IRONLEARN_EXTRA_LIBS:+$IRONLEARN_EXTRA_LIBS:}$(dirname "$found")"
    fi
    [[ -n "$found" ]] || stop "$lib (which the CUDA module links) is not on this machine: not in the ld.so cache, ${CUDA_HOME:-/usr/local/cuda}/lib64 or Python's nvidia wheels"
    note "ok    $lib: $found"
done < <(sed -n 's/^library //p' "$requires")

devices_log="$LOGS/devices.txt"
if ! timeout -k 2 8 "$bundle/bin/ironlearn-cli" devices --require cuda --verbose >"$devices_log" 2>&1; then
    stop "$(grep -m1 -E '^error:|cuda  unavailable' "$devices_log" || echo "ironlearn-cli devices did not answer in 8 s")"
fi
note "ok    $(grep -m1 '^cuda' "$devices_log")"
# The module that answered is the bundle's, not the CPU emulation (IRONLEARN_CUDA_MODULE left
# in the environment); a dry run says so with IRONLEARN_CHECK_DRY_RUN=1.
if grep -q '^cuda .*CUDA emulation' "$devices_log" && [[ "${IRONLEARN_CHECK_DRY_RUN:-0}" != 1 ]]; then
    stop "the CUDA module is the CPU emulation (IRONLEARN_CUDA_MODULE=${IRONLEARN_CUDA_MODULE:-?}); unset it, or set IRONLEARN_CHECK_DRY_RUN=1 for a dry run"
fi
# GPU code runs before the long steps: one dense-layer product (cuBLASLt) and its details.
preflight_log="$LOGS/preflight.txt"
if ! timeout -k 2 30 env IRONLEARN_REQUIRE_CUDA=1 "$bundle/bin/testCudaParity" deviceInfo \
    >"$preflight_log" 2>&1; then
    stop "a first product on the GPU failed or took over 30 s: $(grep -m1 -E '^FAIL|Caught|error' "$preflight_log" || tail -1 "$preflight_log")"
fi
note "ok    a dense-layer product ran: $(grep -m1 -o 'compute [0-9.]*, .*' "$preflight_log")"
note "preflight passed in $SECONDS s"

# ---- 1. parity ----------------------------------------------------------------------------------
step "testCudaParity" 90 "$LOGS/parity.txt" env IRONLEARN_REQUIRE_CUDA=1 \
    "$bundle/bin/testCudaParity"
grep -E '^(Totals|SKIP|FAIL)|recorded training steps' "$LOGS/parity.txt" 2>/dev/null | head -20 |
    sed 's/^QINFO  : TestCudaParity::cleanupTestCase() //; s/^/      /' | tee -a "$summary"
# The allocator without stream-ordered pools (cudaMalloc), as on GPUs whose driver lacks them.
step "parity, no memory pool" 30 "$LOGS/parity-nopool.txt" env IRONLEARN_REQUIRE_CUDA=1 \
    IRONLEARN_CUDA_POOL=0 "$bundle/bin/testCudaParity" deviceInfo memoryRoundTrip \
    recordingMatchesEager recordingSurvivesScratchGrowth training
# Which of the op cases' product shapes and alignments cuBLASLt has a bias epilogue algorithm
# for on this GPU: a report per shape (IRONLEARN_CUDA_EPILOGUE=report writes each plan to
# stderr), not a verdict, since a shape without one correctly falls back to the separate bias
# passes (products where m or n is 1 never ask cuBLASLt). The step fails only if a test does.
linear_cases=()
for shape in "4096x2->256" "4096x256->256" "4096x256->1" "150x4->16" "33x7->9"; do
    for offset in 0 1 2 3 4; do linear_cases+=("ops:linear $shape offset $offset"); done
done
step "epilogues per shape" 45 "$LOGS/epilogues.txt" env IRONLEARN_REQUIRE_CUDA=1 \
    IRONLEARN_CUDA_EPILOGUE=report "$bundle/bin/testCudaParity" "${linear_cases[@]}" \
    "training:image (SIREN)"
note "      cuBLASLt plans: $(grep -c '^cuBLASLt .*: epilogue, ' "$LOGS/epilogues.txt") with an epilogue, $(grep -c '^cuBLASLt .*: no algorithm, ' "$LOGS/epilogues.txt") without, $(grep -c '^cuBLASLt .* refused (' "$LOGS/epilogues.txt") run-time refusals (per shape in epilogues.txt)"
# The dense layer's bias passes without cuBLASLt's epilogues (the fallback where it has no
# algorithm for a case).
step "parity, epilogues off" 20 "$LOGS/parity-noepilogue.txt" env IRONLEARN_REQUIRE_CUDA=1 \
    IRONLEARN_CUDA_EPILOGUE=0 "$bundle/bin/testCudaParity" deviceInfo \
    "ops:linear 4096x256->256 offset 0" "ops:linear 33x7->9 offset 3" "training:image (SIREN)"

# ---- 2. against PyTorch ---------------------------------------------------------------------------
# Python keeps its own libraries: only the ironlearn launchers source env.sh.
step "compare_cuda.sh" 90 "$LOGS/compare.txt" env PYTHON=python3 \
    "$root/packaging/bench/compare_cuda.sh" --repeat "$repeat" --save "$OUT" \
    "$bundle/bin/ironlearn-bench"
[[ -f "$OUT/ours.json" ]] && mv "$OUT/ours.json" "$OUT/bench-ours.json"
[[ -f "$OUT/torch.json" ]] && mv "$OUT/torch.json" "$OUT/bench-torch.json"
# Whether the bias epilogues win: our SIREN steps again with them off (compare with
# bench-ours.json).
# The JSON goes to its own file (the log takes the command line and stderr); a failed run
# leaves no half-written JSON.
step "bench, epilogues off" 25 "$LOGS/bench-noepilogue.txt" env IRONLEARN_CUDA_EPILOGUE=0 \
    bash -c '"$@" >"$0.part" && mv "$0.part" "$0"' "$OUT/bench-noepilogue.json" \
    "$bundle/bin/ironlearn-bench" --backend cuda --repeat "$repeat" --only siren262k,siren4k --json
rm -f "$OUT/bench-noepilogue.json.part"
# The timed steps ran as recordings (CUDA graphs): a failed capture falls back to direct ops,
# which are correct but slower, so the figures would time something else. Each JSON must say
# recordings were made and none fell back (testCudaParity's training runs check the same).
step "bench steps recorded" 10 "$LOGS/recordings.txt" python3 - \
    "$OUT/bench-ours.json" "$OUT/bench-noepilogue.json" <<'EOF'
import json, os, sys
bad = 0
for path in sys.argv[1:]:
    name = os.path.basename(path)
    try:
        with open(path) as f:
            d = json.load(f)
        made, fell = d.get("recorded_steps"), d.get("recording_fallbacks")
        ok = made is not None and made > 0 and fell == 0
        print(f"{'ok' if ok else 'BAD':4} {name}: {made} recordings made, {fell} fell back"
              + (f" ({d.get('recording_failure')})" if fell else ""))
    except (OSError, ValueError) as e:
        ok = False
        print(f"BAD  {name}: {e}")
    bad += not ok
sys.exit(1 if bad else 0)
EOF
grep -v '^====' "$LOGS/recordings.txt" 2>/dev/null | sed 's/^/      /' | tee -a "$summary"

# ---- 3. compute-sanitizer on op-level parity functions ------------------------------------------
sanitizer=""
for s in compute-sanitizer "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer"; do
    command -v "$s" >/dev/null 2>&1 && { sanitizer="$(command -v "$s")"; break; }
done
if [[ -n "$sanitizer" ]]; then
    # The launcher sources env.sh; the sanitizer runs the program under it.
    (failures=0
     . "$bundle/env.sh"
     # Without the memory pool every buffer is its own allocation, so an access past a
     # buffer's end is seen, not hidden inside a larger pool block.
     step "memcheck, no pool" 45 "$LOGS/memcheck.txt" env IRONLEARN_REQUIRE_CUDA=1 \
         IRONLEARN_CUDA_POOL=0 "$sanitizer" \
         --tool memcheck --error-exitcode 3 "$bundle/libexec/testCudaParity" \
         guardAndClip optimizer sampleRows shuffledOrder recordingMatchesEager sumSquaresEach \
         alignedAndUnaligned "ops:embedding 512x8 v50000 d8" "ops:embedding 3000x4 v3 d130" \
         "ops:linear 4096x256->256 offset 3" "ops:linear 33x7->9 offset 1"
     step "racecheck" 30 "$LOGS/racecheck.txt" env IRONLEARN_REQUIRE_CUDA=1 "$sanitizer" \
         --tool racecheck --error-exitcode 3 "$bundle/libexec/testCudaParity" \
         guardAndClip sampleRows sumSquaresEach "ops:embedding 3000x4 v3 d130" \
         "ops:embedding 4096x3 v28 d16"
     # Barriers and warp intrinsics reached by only part of a block or warp; then reads of
     # device memory nothing wrote. Last: a tight budget skips them first.
     step "synccheck" 30 "$LOGS/synccheck.txt" env IRONLEARN_REQUIRE_CUDA=1 "$sanitizer" \
         --tool synccheck --error-exitcode 3 "$bundle/libexec/testCudaParity" \
         guardAndClip sampleRows sumSquaresEach "ops:embedding 3000x4 v3 d130" \
         "ops:layernorm 4096x256" "ops:batchnorm 1x7"
     step "initcheck" 30 "$LOGS/initcheck.txt" env IRONLEARN_REQUIRE_CUDA=1 "$sanitizer" \
         --tool initcheck --error-exitcode 3 "$bundle/libexec/testCudaParity" \
         guardAndClip sampleRows sumSquaresEach recordingMatchesEager \
         "ops:embedding 3000x4 v3 d130" "ops:linear 33x7->9 offset 1"
     exit "$failures") || failures=$((failures + $?))
else
    note "SKIP  compute-sanitizer            not in the CUDA toolkit here"
fi

# ---- summary -----------------------------------------------------------------------------------------
echo
[[ -f "$LOGS/compare.txt" ]] && sed -n '/^workload/,$p' "$LOGS/compare.txt" | tee -a "$summary"
echo
note "$( ((failures == 0)) && echo "all steps passed" || echo "$failures step(s) did not pass") in $SECONDS s; files in $OUT"
pack_logs
((failures == 0))
