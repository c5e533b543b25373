#!/usr/bin/env bash
# Builds the Debian packages (CPack, from the install rules in packaging/CMakeLists.txt), checks
# them, and installs them into a clean root to run them from there:
#   1. builds the programs, the CUDA module and the man pages (the release preset, build/release);
#   2. cpack: ironlearn-studio, ironlearn-cli, ironlearn-samples, ironlearn-cuda (.deb files in
#      build/packages), with Depends from dpkg-shlibdeps;
#   3. desktop-file-validate, appstreamcli validate and lintian (any error fails; the outputs are
#      kept in build/packages/checks.txt);
#   4. apt resolves the packages' dependencies on this system (a simulated install);
#   5. packaging/deb_install_test.sh: dpkg --root into an empty directory, then the installed
#      ironlearn-cli (--version, samples, train :sample/xor.csv, devices) and ironlearn-studio
#      (a screenshot under Xvfb) run from there.
#
#   packaging/deb.sh                 all of it
#   packaging/deb.sh --no-install-test   stop after step 4
# The maintainer is DEBFULLNAME <DEBEMAIL> when both are set (Debian's convention), otherwise
# the author of the last commit.
set -euo pipefail
cd "$(dirname "$0")/.."

INSTALL_TEST=1
[ "${1:-}" = "--no-install-test" ] && INSTALL_TEST=0
BUILD=build/release
OUT=build/packages

TOOLS=(dpkg-dev fakeroot file lintian desktop-file-utils appstream xvfb xauth
       libglib2.0-bin shared-mime-info qt6-qpa-plugins man-db binutils)
missing=()
for p in "${TOOLS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deb.sh: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" > /dev/null
fi

# 1. the build (packaging/setup.sh installs the build dependencies)
maintainer="${DEBFULLNAME:+$DEBFULLNAME <${DEBEMAIL:-}>}"
if [ -z "${DEBEMAIL:-}" ] || [ -z "${DEBFULLNAME:-}" ]; then
  maintainer="$(git log -1 --format='%an <%ae>' 2>/dev/null || true)"
fi
[ -f "$BUILD/build.ninja" ] || IRONLEARN_PRESET=release bash packaging/setup.sh
if [ -n "$maintainer" ]; then
  cmake "$BUILD" -DIRONLEARN_MAINTAINER="$maintainer" > /dev/null
fi
targets=(ironlearn-cli ironlearn-studio ironlearn-bench ironlearn-man-pages ironlearn-changelog)
grep -q 'ironlearn_cuda' "$BUILD/build.ninja" && targets+=(ironlearn_cuda)
cmake --build "$BUILD" -j "$(nproc)" --target "${targets[@]}"

# 2. the packages
rm -rf "$OUT"
mkdir -p "$OUT"
(cd "$BUILD" && cpack -G DEB -B "$PWD/../packages" > "$PWD/../packages/cpack.log") || {
  cat "$OUT/cpack.log"
  exit 1
}
rm -rf "$OUT/_CPack_Packages"
debs=("$OUT"/*.deb)
echo "deb.sh: built ${#debs[@]} packages:"
for d in "${debs[@]}"; do
  printf '  %-44s %8s  Depends: %s\n' "$(basename "$d")" "$(du -h "$d" | cut -f1)" \
    "$(dpkg-deb -f "$d" Depends)"
done

# 3. the checks: validators on the installed files, lintian on the packages
checks="$OUT/checks.txt"
extract="$OUT/extracted"
mkdir -p "$extract"
for d in "${debs[@]}"; do dpkg-deb -x "$d" "$extract"; done
status=0
{
  echo "\$ desktop-file-validate usr/share/applications/io.github.ironlearn.studio.desktop"
  desktop-file-validate "$extract/usr/share/applications/io.github.ironlearn.studio.desktop" \
    2>&1 || status=1
  echo "(exit status $status)"
  echo
  echo "\$ appstreamcli validate --no-net --pedantic usr/share/metainfo/io.github.ironlearn.studio.metainfo.xml"
  appstreamcli validate --no-net --pedantic \
    "$extract/usr/share/metainfo/io.github.ironlearn.studio.metainfo.xml" 2>&1 || status=1
  echo
  echo "\$ lintian --display-info --pedantic $(cd "$OUT" && echo ./*.deb)"
  (cd "$OUT" && lintian --display-info --pedantic ./*.deb 2>&1) || true
} > "$checks"
rm -rf "$extract"
cat "$checks"
if grep -q '^E: ' "$checks"; then
  echo "deb.sh: lintian reports errors (above)" >&2
  status=1
fi
[ "$status" -eq 0 ] || { echo "deb.sh: the checks failed" >&2; exit 1; }

# 4. apt can satisfy every dependency here (nothing is installed)
apt-get install --simulate --no-install-recommends "${debs[@]/#/./}" > "$OUT/apt-simulate.txt" \
  2>&1 || { cat "$OUT/apt-simulate.txt"; echo "deb.sh: apt cannot install the packages" >&2
            exit 1; }
echo "deb.sh: apt resolves the dependencies ($(grep -c '^Inst ' "$OUT/apt-simulate.txt") \
packages would be installed)"

# 5. install into a clean root and run from there
if [ "$INSTALL_TEST" = 1 ]; then
  bash packaging/deb_install_test.sh "$OUT"
fi
echo "deb.sh: packages in $OUT"
