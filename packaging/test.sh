#!/usr/bin/env bash
# The test command (what CI runs, .ci/run): installs what is missing, builds, and runs
#   1. the whole suite on the release build (build/release), under LC_ALL=de_DE.UTF-8,
#   2. the Debian packages, from that build: built, validated (desktop-file-validate,
#      appstreamcli, lintian), installed into a clean root and run from there (packaging/deb.sh),
#   3. the whole suite again under AddressSanitizer + UBSan (the asan preset, build/asan),
#   4. a fuzz smoke run: every libFuzzer target for 30 s from its committed seeds (build/fuzz).
# Each stage says how long it took; the first that fails stops the rest (exit status 1).
#
#   packaging/test.sh                       all four stages
#   packaging/test.sh --stages release      only the release suite (release,deb,asan,fuzz to pick)
#   packaging/test.sh -R Gradient           ctest arguments go to the release and asan suites
#   IRONLEARN_FUZZ_SECONDS=60 packaging/test.sh   a longer smoke run per target
set -euo pipefail
cd "$(dirname "$0")/.."

STAGES="release,deb,asan,fuzz"
if [ "${1:-}" = "--stages" ]; then
  STAGES="$2"
  shift 2
fi
# IRONLEARN_PRESET=native (or another test preset) replaces the release build in stage 1.
RELEASE_PRESET="${IRONLEARN_PRESET:-release}"

stage() { # name, then the command
  local name="$1" start=$SECONDS
  shift
  echo "== test.sh: $name"
  if "$@"; then
    echo "== test.sh: $name passed in $((SECONDS - start)) s"
  else
    echo "== test.sh: $name FAILED after $((SECONDS - start)) s"
    exit 1
  fi
}

suite() { # preset, ctest arguments...
  local preset="$1"
  shift
  IRONLEARN_PRESET="$preset" bash packaging/setup.sh &&
    ctest --preset "$preset" -j "$(nproc)" "$@"
}

# The release suite runs under a comma-decimal locale (Qt hands the environment's locale to the C
# library: numbers must read and print the same under it), the sanitizer suite under the
# environment's own; IRONLEARN_REQUIRE_LOCALE turns the locale tests' skip into a failure.
comma_locale_suite() {
  LC_ALL=de_DE.UTF-8 LANG=de_DE.UTF-8 IRONLEARN_REQUIRE_LOCALE=1 suite "$@"
}

for s in ${STAGES//,/ }; do
  case "$s" in
    release) stage "release suite ($RELEASE_PRESET, LC_ALL=de_DE.UTF-8)" comma_locale_suite "$RELEASE_PRESET" "$@" ;;
    deb) stage "Debian packages (build, lintian, install into a clean root)" bash packaging/deb.sh ;;
    asan) stage "sanitizer suite (asan: ASan + UBSan + LSan)" suite asan "$@" ;;
    fuzz)
      stage "fuzz smoke run (${IRONLEARN_FUZZ_SECONDS:-30} s per target)" \
        bash packaging/fuzz/run.sh --seconds "${IRONLEARN_FUZZ_SECONDS:-30}" \
        --parallel "$(nproc)"
      ;;
    *) echo "test.sh: unknown stage '$s' (release, deb, asan, fuzz)" >&2; exit 2 ;;
  esac
done
