#!/usr/bin/env bash
# Builds the libFuzzer targets (the fuzz preset: clang, ASan + UBSan) if needed, runs each for a
# while, and says what it found.
#
#   packaging/fuzz/run.sh                        every target, 60 s each
#   packaging/fuzz/run.sh --seconds 1800 csv     one target for 30 minutes
#   packaging/fuzz/run.sh --parallel 2 ...       two targets at a time (one core each)
#   packaging/fuzz/run.sh --no-build ...         run what build/fuzz holds as it is
#
# Targets: csv jsondataset names safetensors image export (tests/fuzz/Fuzz*.cpp). Each starts from its
# committed seeds (tests/fuzz/corpus/<target>/) plus what earlier runs here found
# (build/fuzz/corpus/<target>/). An input that breaks a check is saved under
# build/fuzz/findings/<target>/; copy it into tests/fuzz/corpus/<target>/ with the fix, and
# testFuzz<Target> replays it on every test run. Logs: build/fuzz/logs/<target>.log.
# Exit status: 0 when no target found anything, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/../.."

SECONDS_EACH=60
PARALLEL=1
BUILD=1
TARGETS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SECONDS_EACH="$2"; shift 2 ;;
    --parallel) PARALLEL="$2"; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) TARGETS+=("$1"); shift ;;
  esac
done
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(csv jsondataset names safetensors image export)

program_of() {
  case "$1" in
    csv) echo fuzzCsv ;;
    jsondataset) echo fuzzJsonDataset ;;
    names) echo fuzzNames ;;
    safetensors) echo fuzzSafeTensors ;;
    export) echo fuzzExport ;;
    image) echo fuzzImage ;;
    *) echo "run.sh: unknown target '$1' (csv jsondataset names safetensors image export)" >&2; exit 2 ;;
  esac
}
for t in "${TARGETS[@]}"; do program_of "$t" >/dev/null; done

# Installs what is missing (clang, libFuzzer, libomp) and builds build/fuzz incrementally.
[ "$BUILD" -eq 0 ] || IRONLEARN_PRESET=fuzz bash packaging/setup.sh

run_one() {
  local t="$1" program work findings log
  program="build/fuzz/tests/fuzz/$(program_of "$t")"
  work="build/fuzz/corpus/$t"; findings="build/fuzz/findings/$t"; log="build/fuzz/logs/$t.log"
  mkdir -p "$work" "$findings" build/fuzz/logs
  local before after
  before=$(ls "$findings" | wc -l)
  # Fork mode: a child process fuzzes, and a finding is saved and fuzzing goes on, so one run
  # reports every problem it meets. -timeout: an input taking over 10 s is a finding (a hang),
  # as is one needing over 2 GB (-rss_limit_mb).
  local dict=()
  [ -f "tests/fuzz/$t.dict" ] && dict=(-dict="tests/fuzz/$t.dict")
  "$program" "${dict[@]}" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
    -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$findings/" "$work" "tests/fuzz/corpus/$t" >"$log" 2>&1 || true
  after=$(ls "$findings" | wc -l)
  local stats
  stats=$(grep -E '^#[0-9]+: cov: ' "$log" | tail -1 | sed -E 's/ dft_time.*//')
  if [ "$after" -eq "$before" ] && [ -n "$stats" ]; then
    printf '%-12s %5ss  nothing found  %s\n' "$t" "$SECONDS_EACH" "$stats"
    return 0
  fi
  printf '%-12s %5ss  FOUND %s new input(s) in %s/  %s\n' "$t" "$SECONDS_EACH" \
    "$((after - before))" "$findings" "${stats:-(no fuzzing stats; see $log)}"
  grep -E 'fuzz check failed|runtime error|ERROR: AddressSanitizer|ERROR: libFuzzer' "$log" |
    sed -E 's/^==[0-9]+==//' | sort | uniq -c | sort -rn | head -5 | cut -c1-200
  return 1
}

found=0
pids=()
for t in "${TARGETS[@]}"; do
  if [ "$PARALLEL" -le 1 ]; then
    run_one "$t" || found=1
  else
    run_one "$t" &
    pids+=($!)
    if [ ${#pids[@]} -ge "$PARALLEL" ]; then
      wait "${pids[0]}" || found=1
      pids=("${pids[@]:1}")
    fi
  fi
done
for p in "${pids[@]}"; do wait "$p" || found=1; done
exit $found
