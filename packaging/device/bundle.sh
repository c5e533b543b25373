#!/usr/bin/env bash
# Packs what the GPU device check (packaging/device/check.sh) runs into one self-contained
# folder and one archive, for a machine that has the NVIDIA driver, the CUDA 13 toolkit (cuBLAS),
# Python and PyTorch, but no Qt and no OpenBLAS.
#
#   packaging/device/bundle.sh [--allow-no-cuda] BUILD_DIR OUT_DIR
#
# From BUILD_DIR: ironlearn-bench, ironlearn-cli and testCudaParity, and the
# CUDA module lib/libironlearn-cuda.so (--allow-no-cuda: go on without it, for a trial of this
# script on a machine without the CUDA toolkit). Into OUT_DIR:
#   libexec/   the executables (stripped; RUNPATH $ORIGIN/../lib when patchelf is there)
#   lib/       the CUDA module and every shared library the programs need from this machine
#              except glibc, the NVIDIA driver (libcuda) and the CUDA toolkit's libraries
#              (cuBLAS...), which the device has: Qt 6 Core/Gui/Test, ICU, OpenBLAS, libgomp,
#              libstdc++...
#   plugins/   Qt's offscreen platform plugin and image-format plugins (Qt Gui is linked)
#   bin/       launchers: each sources env.sh, then runs the program from libexec/
#   env.sh     source it to run the programs directly: LD_LIBRARY_PATH, QT_PLUGIN_PATH,
#              QT_QPA_PLATFORM=offscreen, PATH
#   MANIFEST.txt  what is in the bundle and where each library came from
#   REQUIRES.txt  what the device must have, for check.sh's preflight: "glibc 2.34" (the newest
#              GLIBC_ symbol version any bundled file needs) and "library libcublas.so.13" for
#              each library of the CUDA toolkit the module links
# and OUT_DIR.tar.xz next to OUT_DIR: the bundle to carry to the device (the unpacked folder is
# about 110 MiB, mostly ICU data and OpenBLAS; the archive must stay under 55 MiB, which this
# script checks, so that it fits the device tool's 64 MiB carry with room to spare). Only the launchers in bin/ (or a shell that sourced env.sh) see the bundled
# libraries; Python started next to them keeps the device's own.
#
# Build for the device's CPU and GPU, not this machine's, for example:
#   cmake -S . -B build/device -G Ninja -DIRONLEARN_GUI=OFF \
#         -DCMAKE_CUDA_ARCHITECTURES=90 && ninja -C build/device
set -euo pipefail

allow_no_cuda=0
args=()
for a in "$@"; do
    case "$a" in
        --allow-no-cuda) allow_no_cuda=1 ;;
        -h|--help) sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "bundle.sh: unknown option $a" >&2; exit 2 ;;
        *) args+=("$a") ;;
    esac
done
if [[ ${#args[@]} -ne 2 ]]; then
    echo "usage: bundle.sh [--allow-no-cuda] BUILD_DIR OUT_DIR" >&2
    exit 2
fi
build="$(cd "${args[0]}" && pwd)"
out="${args[1]}"
max_archive_mib=55

die() { echo "bundle.sh: $*" >&2; exit 1; }

# ---- what goes in ------------------------------------------------------------------------------
declare -A programs=(
    [ironlearn-bench]="$build/src/bench/ironlearn-bench"
    [ironlearn-cli]="$build/src/cli/ironlearn-cli"
    [testCudaParity]="$build/tests/engine/testCudaParity"
)
for name in "${!programs[@]}"; do
    [[ -x "${programs[$name]}" ]] || die "${programs[$name]} is missing; build it first (ninja -C $build $name)"
done
module="$build/lib/libironlearn-cuda.so"
if [[ ! -f "$module" ]]; then
    if [[ $allow_no_cuda -eq 1 ]]; then
        echo "bundle.sh: warning: $module is missing (built without the CUDA toolkit?); the bundle will have no CUDA backend" >&2
        module=""
    else
        die "$module is missing: configure BUILD_DIR where nvcc is found (IRONLEARN_CUDA=ON), or pass --allow-no-cuda for a trial"
    fi
fi
if grep -qs '^IRONLEARN_MARCH:STRING=native$' "$build/CMakeCache.txt"; then
    echo "bundle.sh: warning: $build was built with -march=native; the device's CPU may lack this machine's instructions (configure without IRONLEARN_MARCH: the default x86-64-v2 baseline carries its own AVX2 and AVX-512 kernels)" >&2
fi

# Libraries the device provides, never bundled: glibc, the NVIDIA driver, the CUDA toolkit.
is_system_lib() {
    local name="$1" path="$2"
    case "$name" in
        linux-vdso.so*|ld-linux*.so*|libc.so.*|libm.so.*|libmvec.so.*|libpthread.so.*|\
        libdl.so.*|librt.so.*|libresolv.so.*|libutil.so.*|libanl.so.*|libnsl.so.*|\
        libBrokenLocale.so.*|libthread_db.so.*)
            return 0 ;;
        libcuda.so*|libnvidia-*|libcudart.so*|libcublas.so*|libcublasLt.so*|libnvrtc*|\
        libnvJitLink.so*|libcufft*|libcurand.so*|libcusparse.so*|libcusolver*|libnvToolsExt*|\
        libcudnn*|libnccl*)
            return 0 ;;
    esac
    case "$path" in
        /usr/local/cuda*|/usr/local/nvidia*|/opt/cuda*) return 0 ;;
    esac
    return 1
}

qt_plugins=""
for q in qtpaths6 qtpaths qmake6; do
    if command -v "$q" >/dev/null 2>&1; then
        qt_plugins="$("$q" --query QT_INSTALL_PLUGINS 2>/dev/null || "$q" -query QT_INSTALL_PLUGINS 2>/dev/null || true)"
        [[ -d "$qt_plugins" ]] && break
    fi
done
[[ -d "$qt_plugins" ]] || qt_plugins=/usr/lib/x86_64-linux-gnu/qt6/plugins

# ---- lay it out ---------------------------------------------------------------------------------
rm -rf "$out" "$out.tar.xz"
mkdir -p "$out"/{bin,libexec,lib,plugins}
out="$(cd "$out" && pwd)"
manifest="$out/MANIFEST.txt"
{
    echo "Iron Learn device bundle, made $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n) ($(. /etc/os-release && echo "$PRETTY_NAME"), $(ldd --version | head -1))"
    echo "source: $(git -C "$(dirname "$0")" describe --always --dirty 2>/dev/null || echo unknown); build: $build"
    echo
} >"$manifest"

elfs=()
for name in "${!programs[@]}"; do
    cp "${programs[$name]}" "$out/libexec/$name"
    strip --strip-unneeded "$out/libexec/$name"
    elfs+=("$out/libexec/$name")
    echo "libexec/$name  <- ${programs[$name]} (stripped)" >>"$manifest"
done
if [[ -n "$module" ]]; then
    # Not stripped: it carries the GPU code, and its RUNPATH names the toolkit's cuBLAS.
    cp "$module" "$out/lib/"
    elfs+=("$out/lib/libironlearn-cuda.so")
    echo "lib/libironlearn-cuda.so  <- $module" >>"$manifest"
fi

# Qt Gui is linked (by the tasks): the offscreen platform plugin and the image formats.
# (grep without -q reads all of ldd's output: with pipefail, an early exit would fail ldd.)
if ldd "${elfs[@]}" 2>/dev/null | grep 'libQt6Gui\.so' >/dev/null; then
    for p in platforms/libqoffscreen.so imageformats/libqjpeg.so imageformats/libqgif.so; do
        if [[ -f "$qt_plugins/$p" ]]; then
            mkdir -p "$out/plugins/$(dirname "$p")"
            cp "$qt_plugins/$p" "$out/plugins/$p"
            elfs+=("$out/plugins/$p")
            echo "plugins/$p  <- $qt_plugins/$p" >>"$manifest"
        else
            echo "bundle.sh: warning: Qt plugin $qt_plugins/$p not found" >&2
        fi
    done
fi

# Every library those need (ldd lists the whole closure), copied once, links resolved.
echo >>"$manifest"
missing=()
while read -r name path; do
    if [[ "$path" == "not" ]]; then
        is_system_lib "$name" "" || missing+=("$name")
        continue
    fi
    is_system_lib "$name" "$path" && continue
    [[ -e "$out/lib/$name" ]] && continue
    cp -L "$path" "$out/lib/$name"
    chmod u+w "$out/lib/$name"
    echo "lib/$name  <- $path" >>"$manifest"
done < <(ldd "${elfs[@]}" 2>/dev/null | awk '$2 == "=>" { print $1, $3 }' | sort -u)
[[ ${#missing[@]} -eq 0 ]] || die "libraries not found on this machine: ${missing[*]}"

# Find the bundled libraries first, wherever the bundle is unpacked.
if command -v patchelf >/dev/null 2>&1; then
    for f in "$out"/libexec/*; do patchelf --set-rpath '$ORIGIN/../lib' "$f"; done
    for f in "$out"/plugins/*/*.so; do [[ -e "$f" ]] && patchelf --set-rpath '$ORIGIN/../../lib' "$f"; done
else
    echo "bundle.sh: note: no patchelf; the programs find their libraries through env.sh (bin/ launchers) only" >&2
fi

# ---- env.sh and the launchers -------------------------------------------------------------------
cat >"$out/env.sh" <<'EOF'
# Source this to run the bundled programs directly:  . BUNDLE/env.sh
# (From sh rather than bash, set IRONLEARN_BUNDLE to the bundle's folder first.) The bundle's
# lib/ comes first, then IRONLEARN_EXTRA_LIBS (where a device keeps cuBLAS, if not in the CUDA
# toolkit), then the CUDA toolkit's libraries.
if [ -n "${BASH_SOURCE:-}" ]; then
    IRONLEARN_BUNDLE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
fi
if [ -z "${IRONLEARN_BUNDLE:-}" ]; then
    echo "env.sh: set IRONLEARN_BUNDLE to the bundle folder before sourcing this from sh" >&2
    return 1 2>/dev/null || exit 1
fi
export IRONLEARN_BUNDLE
LD_LIBRARY_PATH="$IRONLEARN_BUNDLE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ -n "${IRONLEARN_EXTRA_LIBS:-}" ]; then LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$IRONLEARN_EXTRA_LIBS"; fi
for d in "${CUDA_HOME:-/usr/local/cuda}/lib64" "${CUDA_HOME:-/usr/local/cuda}/lib" \
         /usr/local/cuda/targets/x86_64-linux/lib; do
    if [ -d "$d" ]; then LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$d"; fi
done
export LD_LIBRARY_PATH
export QT_PLUGIN_PATH="$IRONLEARN_BUNDLE/plugins"
export QT_QPA_PLATFORM=offscreen
export PATH="$IRONLEARN_BUNDLE/bin${PATH:+:$PATH}"
EOF
for name in "${!programs[@]}"; do
    cat >"$out/bin/$name" <<EOF
#!/bin/sh
# Runs libexec/$name with the bundle's libraries (env.sh).
IRONLEARN_BUNDLE="\$(cd "\$(dirname "\$0")/.." && pwd)"
. "\$IRONLEARN_BUNDLE/env.sh"
exec "\$IRONLEARN_BUNDLE/libexec/$name" "\$@"
EOF
    chmod +x "$out/bin/$name"
done

# ---- check: everything resolves inside the bundle or to a system library -----------------------
outside=$(env -i LD_LIBRARY_PATH="$out/lib" ldd "${elfs[@]}" 2>/dev/null |
    awk '$2 == "=>" { print $1, $3 }' | sort -u | while read -r name path; do
        [[ "$path" == "$out"/lib/* ]] && continue
        is_system_lib "$name" "$path" && continue
        echo "$name => $path"
    done)
[[ -z "$outside" ]] || die "resolved outside the bundle: $outside"

# ---- what the device must provide ---------------------------------------------------------------
# The newest glibc symbol version any bundled file asks for, and the toolkit libraries the module
# links (not bundled): check.sh compares them with the device's before running anything.
glibc_needed=$(objdump -T "${elfs[@]}" "$out"/lib/*.so* 2>/dev/null | grep -o 'GLIBC_[0-9.]*' |
    sed 's/GLIBC_//' | sort -t. -k1,1n -k2,2n -k3,3n -u | tail -1 || true)
{
    echo "glibc ${glibc_needed:-unknown}"
    if [[ -n "$module" ]]; then
        readelf -d "$out/lib/libironlearn-cuda.so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' |
            while read -r lib; do
                if is_system_lib "$lib" "" && [[ "$lib" == libcublas* || "$lib" == libcudart* ]]; then
                    echo "library $lib"
                fi
            done
    fi
} >"$out/REQUIRES.txt"
echo "REQUIRES.txt: $(tr '\n' ';' <"$out/REQUIRES.txt")" >>"$manifest"

# ---- archive and size ------------------------------------------------------------------------------
tar -C "$(dirname "$out")" -cf - "$(basename "$out")" | xz -T0 -6 >"$out.tar.xz"
unpacked_kib=$(du -sk "$out" | cut -f1)
archive_bytes=$(stat -c %s "$out.tar.xz")
{
    echo
    echo "unpacked: $((unpacked_kib / 1024)) MiB; archive $(basename "$out").tar.xz: $((archive_bytes / 1048576)) MiB"
} >>"$manifest"
echo "bundle.sh: $out ($((unpacked_kib / 1024)) MiB, $(ls "$out/lib" | wc -l) libraries)"
echo "bundle.sh: $out.tar.xz ($((archive_bytes / 1048576)) MiB)"
if (( archive_bytes > max_archive_mib * 1048576 )); then
    die "$out.tar.xz is over $max_archive_mib MiB"
fi
