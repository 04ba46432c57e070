#!/usr/bin/env bash
# cross.sh - builds mygpt for another CPU with Debian's cross compiler into build-ARCH/
# and runs its tests under qemu-user, so that the same bits as on x86-64 are checked on
# a machine without that CPU. Installs what is missing, as setup.sh does (apt-get by
# package name, the libraries of the other CPU through Debian's multiarch).
#
#   bash scripts/cross.sh aarch64            # install, configure, build, run the suite (below)
#   bash scripts/cross.sh aarch64 --build    # install, configure and build only
#   bash scripts/cross.sh aarch64 --ci       # then the subset CI runs (every kernel path)
#   bash scripts/cross.sh aarch64 SUITE...   # then only these suites (meson test --suite)
#
# Where clang is installed (scripts/clang.sh installs it), the whole run and --ci then
# build the library with clang for that CPU too, into build-ARCH-clang/, and run the gpt
# suite there (at the end).
#
# Without MPI: Debian 12's libopenmpi-dev and openmpi-bin cannot be installed for arm64
# beside the amd64 ones (apt would remove the x86 build's MPI), so build-aarch64 is
# configured with -Dmpi=disabled: the mpi test is not in it, and chapter 35 (which would
# report that it has no MPI) is left out of the whole run and of --ci.
set -euo pipefail
MYGPT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

arch=${1:-}
case "$arch" in
aarch64) triple=aarch64-linux-gnu debarch=arm64 ;;
*) echo "cross.sh: unknown architecture '${arch}': give aarch64" >&2; exit 2 ;;
esac
shift
build=${MYGPT_CROSS_BUILD:-$MYGPT_ROOT/build-$arch}
sysroot=$build-sysroot
cross_file=$MYGPT_ROOT/scripts/cross/$triple.ini

# Only the host's tools are installed (apt-get install); the other CPU's libraries are
# never installed: installing an arm64 -dev package that is not Multi-Arch: same (Criterion's
# dependencies) would remove the amd64 one and break the native build. They are downloaded
# with their dependencies (apt-get download) and unpacked into build-ARCH-sysroot/.
HOST_PACKAGES=(meson ninja-build pkg-config "gcc-$triple" "libc6-dev-$debarch-cross" qemu-user qemu-user-binfmt)
TARGET_ROOTS=(libc6 libgomp1 libpcre2-dev libsleef-dev libcurl4-openssl-dev libssl-dev libcriterion-dev)
# not in the sysroot: the host's programs, and the C library's development files, which
# the cross compiler has (libc6-dev-arm64-cross; the sysroot's libc.so names host paths)
TARGET_SKIP='^(pkg-config|pkgconf|pkgconf-bin|libpkgconf3|rpcsvc-proto|libc-dev-bin|libc6-dev|libcrypt-dev|linux-libc-dev|libnsl-dev|libtirpc-dev)$'

sudo=()
[ "$(id -u)" -ne 0 ] && sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive

install_packages() {
    local missing=() p
    for p in "${HOST_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p") # held ones too
    done
    # apt-get download of :arm64 packages needs their lists: the architecture is added to
    # dpkg's (this installs nothing)
    if ! dpkg --print-foreign-architectures | grep -qx "$debarch"; then
        echo "cross: adding the $debarch architecture to dpkg's package lists"
        "${sudo[@]}" dpkg --add-architecture "$debarch"
        bash "$MYGPT_ROOT/scripts/apt.sh" update
    fi
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "cross: installing Debian packages: ${missing[*]}"
    bash "$MYGPT_ROOT/scripts/apt.sh" update
    bash "$MYGPT_ROOT/scripts/apt.sh" install --no-install-recommends --no-remove "${missing[@]}"
}

# The other CPU's libraries and their dependencies, unpacked into build-ARCH-sysroot/
make_sysroot() {
    [ -f "$sysroot/.complete" ] && return 0
    echo "cross: unpacking the $debarch libraries into $sysroot"
    rm -rf "$sysroot"
    mkdir -p "$sysroot/debs"
    local roots=() names p
    for p in "${TARGET_ROOTS[@]}"; do roots+=("$p:$debarch"); done
    names=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
        --no-replaces --no-enhances "${roots[@]}" | grep -E "^[a-z0-9].*:$debarch\$" | sed "s/:$debarch\$//" |
        grep -Ev "$TARGET_SKIP" | sort -u)
    [ -n "$names" ] || { echo "cross: no $debarch packages found (apt-get update?)" >&2; return 1; }
    # shellcheck disable=SC2086 # one name a word
    (cd "$sysroot/debs" && apt-get download -q $(printf "%s:$debarch " $names) >/dev/null 2>&1) ||
        { echo "cross: apt-get download of the $debarch libraries failed" >&2; return 1; }
    for p in "$sysroot"/debs/*.deb; do dpkg-deb -x "$p" "$sysroot"; done
    touch "$sysroot/.complete"
}

# A second cross file with this machine's paths: pkg-config reads the sysroot's .pc files
# (their -I and -L moved into it), its headers come before the host's /usr/include that the
# cross compiler also searches; programs are linked to run with the sysroot's loader and
# libraries, so qemu runs them without the libraries installed.
write_paths_file() {
    local lib=$sysroot/lib/$triple usrlib=$sysroot/usr/lib/$triple loader
    loader=$(cd "$lib" && ls ld-linux-*.so.* | head -n 1)
    cat >"$sysroot/paths.ini" <<EOF
[properties]
sys_root = '$sysroot'
pkg_config_libdir = '$usrlib/pkgconfig:$sysroot/usr/share/pkgconfig'

[built-in options]
c_args = ['-isystem', '$sysroot/usr/include/$triple', '-isystem', '$sysroot/usr/include']
c_link_args = ['-Wl,--dynamic-linker=$lib/$loader', '-Wl,--disable-new-dtags',
               '-Wl,-rpath,$lib:$usrlib', '-Wl,-rpath-link,$lib:$usrlib', '-L$usrlib']
EOF
}

# The kernel runs the other CPU's programs through qemu (binfmt_misc), as the tests start
# the tool and the chapters from shell scripts and from other programs.
register_binfmt() {
    local name=qemu-$arch
    [ -e "/proc/sys/fs/binfmt_misc/$name" ] && return 0
    if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
        "${sudo[@]}" mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc ||
            { echo "cross: binfmt_misc cannot be mounted: the tests cannot start $arch programs" >&2; return 1; }
    fi
    local conf=/usr/lib/binfmt.d/$name.conf
    [ -f "$conf" ] || { echo "cross: $conf is missing (package qemu-user-binfmt)" >&2; return 1; }
    echo "cross: registering $name with binfmt_misc"
    "${sudo[@]}" sh -c "cat '$conf' > /proc/sys/fs/binfmt_misc/register"
}

# configure_and_build DIR CROSS_FILE [MESON_OPTION...] [-- NINJA_TARGET...]
configure_and_build() {
    local dir=$1 file=$2 options=() targets=()
    shift 2
    while [ $# -gt 0 ] && [ "$1" != -- ]; do options+=("$1"); shift; done
    [ $# -gt 0 ] && shift && targets=("$@")
    if [ ! -f "$dir/build.ninja" ]; then
        echo "cross: configuring $dir (meson, $file)"
        write_paths_file
        local conf
        if ! conf=$(meson setup "$dir" "$MYGPT_ROOT" --cross-file "$file" --cross-file "$sysroot/paths.ini" \
            -Dmpi=disabled "${options[@]}" 2>&1); then
            printf '%s\n' "$conf"
            return 1
        fi
    fi
    local started=$SECONDS log
    echo "cross: building in $dir (ninja)"
    log=$(mktemp)
    if ! nice -n 10 ninja -C "$dir" "${targets[@]}" >"$log" 2>&1; then
        cat "$log"
        rm -f "$log"
        return 1
    fi
    rm -f "$log"
    echo "cross: built in $((SECONDS - started)) s"
}

install_packages
make_sysroot
register_binfmt
configure_and_build "$build" "$cross_file"
[ "${1:-}" = --build ] && exit 0

export MYGPT_DATA="${MYGPT_DATA:-$MYGPT_ROOT/data}"
if ! bash "$MYGPT_ROOT/scripts/fetch-data.sh"; then
    [ "${CI:-}" = true ] && { echo "cross: the data could not be fetched" >&2; exit 1; }
    echo "cross: the data is incomplete; the tests that need it will report themselves as skipped" >&2
fi
# Waiting threads sleep instead of spinning (as test.sh): emulated spinning costs much more
export OMP_WAIT_POLICY=PASSIVE
# qemu 7.2 takes memory for its translated code from glib's slice allocator, whose locks a
# fork does not reset: a child forked while another thread held one (Criterion's runner
# forks a worker per test, beside its message threads) waited forever in g_slice_alloc
# (docs/building.md). Plain malloc, which the C library makes safe across a fork:
export G_SLICE=always-malloc
# Emulation is slower than the machine, a float multiply-add a hundred times and more
# (docs/building.md, "The whole run"): the tests get 4 times their timeouts, and the
# whole run leaves out the longest (below)
args=(--timeout-multiplier 4)
# clang for this CPU too (a Mac's compiler on its own chip): every source of the library
# compiles with no warning, as under gcc, with OpenMP (-fsyntax-only; clang's build below
# is without it). (A clang-only branch once called an x86 function from the NEON tile.)
if command -v clang >/dev/null; then
    clang_failed=0
    while IFS= read -r f; do
        clang --target="$triple" -std=c11 -fsyntax-only -fopenmp -Wall -Wextra -Wpedantic -Werror \
            -Wno-missing-field-initializers -ffp-contract=off -D_DEFAULT_SOURCE -fno-math-errno \
            -I"$build/lib" -I"$MYGPT_ROOT/lib" -I"$MYGPT_ROOT/lib/include" -I"/usr/$triple/include" \
            -isystem "$sysroot/usr/include/$triple" -isystem "$sysroot/usr/include" "$MYGPT_ROOT/$f" || clang_failed=1
    done < <(cd "$MYGPT_ROOT" && git ls-files 'lib/*.c')
    if [ "$clang_failed" -ne 0 ]; then
        echo "cross: the library does not compile with clang for $arch (above)" >&2
        exit 1
    fi
    echo "cross: the library's sources compile with clang for $arch, no warning"
else
    echo "cross: no clang here: the library is not compiled with clang for $arch, nor its kernels tested"
fi
if [ "${1:-}" = --ci ]; then
    # Every kernel path under emulation in a few minutes: the generator (rng), the vector
    # loops (vecmath: exp, erf, GELU; their accuracy over the float line, vecmath_accuracy,
    # the same C as on x86 and a minute emulated, in the whole run), every path and layout
    # of the products and the attention, fast and plain, against PyTorch (gpt), the backward
    # pass's gradients of every architecture against PyTorch's (arch), the norms, clipping
    # and the schedule's libm cos (learn), sampling's SLEEF softmax and draws (sample), the
    # decoding kernels of bf16 and int8 weights, NEON and plain (quantize), the position
    # encodings' SLEEF sin, cos, exp and pow in PyTorch's vectors of 8 (posenc), and
    # chapters whose expected output holds the forward pass (26), the loss's SLEEF rows (32)
    # and the position encodings (47, 53, 54), byte for byte. (print, tokenizer and the
    # book's GPT-2-sized chapter 37 also pass under qemu: the whole run.)
    for t in rng vecmath gpt arch learn sample quantize posenc; do args+=("$t"); done
    for c in 26_gpt_main 32_loss 47_sinusoidal_encoding 53_alibi 54_rope; do args+=("chapter $c"); done
elif [ $# -gt 0 ]; then
    for s in "$@"; do args+=(--suite "$s"); done
else
    # every test that runs the aarch64 build. Left out: the checks of the repository's text
    # and scripts, which run no aarch64 code; chapter 35, which needs MPI (above: this
    # build has none); `examples`, which trains chapter 38 in full;
    # and what trains for many steps at GPT-2's vocabulary or width, which takes seconds
    # here and hours emulated:
    # appendix D's --smoke runs (a 768-wide block; its schedule and clipping are in the
    # learn suite) and the tool's suites that train, resume and fine-tune for minutes (the
    # optimizer's bits are in the train and learn suites, the training loop's in cli_train).
    # A left-out suite runs by name (cross.sh aarch64 cli_nanogpt), a left-out test with
    # meson test -C build-aarch64 NAME. The trainings among the chapters are --smoke runs
    # in a cross build (chapters/meson.build).
    left_out=$(printf '%s\n' check-chapter fetch-data setup-script exports layers links lesson-code lesson-chain \
        lesson-scripts site-script site chapter-map no-machine-paths serial-omp clones examples \
        "chapter 35_data_parallel" \
        "chapter 40_book_train_model --smoke" "chapter 40_book_train_model --smoke --book" \
        cli_train_resume cli_train_reference instruct_finetune cli_runs cli_nanogpt)
    all=$(meson test -C "$build" --list 2>/dev/null | grep " / " | sed 's/^.* \/ //')
    while IFS= read -r t; do # a renamed test would silently come back: hours under qemu
        grep -qxF -- "$t" <<<"$all" || echo "cross: '$t', left out, is no test of $build" >&2
    done <<<"$left_out"
    while IFS= read -r t; do
        grep -qxF -- "$t" <<<"$left_out" || args+=("$t")
    done <<<"$all"
fi
status=0
meson test -C "$build" --print-errorlogs "${args[@]}" || status=$?

# clang's build for this CPU, run (not with SUITE...): the gpt suite (every path and layout
# of the products, the attention, decoding, the logits against PyTorch's) holds its
# clang-only tiles (matmul_isa.c, attention.c) to the plain loops' bits (a filter for the
# kernels' tests alone would list the other 18 as skipped). Built without OpenMP
# (-Dopenmp=disabled), as a Mac's clang builds without Homebrew's libomp: the tiles are
# the same code on one thread or many.
clang_build=$build-clang
if command -v clang >/dev/null && { [ $# -eq 0 ] || [ "$1" = --ci ]; }; then
    rm -f "$clang_build/meson-logs/testlog.json"
    configure_and_build "$clang_build" "$MYGPT_ROOT/scripts/cross/$triple-clang.ini" -Dopenmp=disabled \
        -Dwerror=true -- tests/test_gpt || { echo "cross: clang's $arch build failed (above)" >&2; exit 1; }
    # alone on the machine now: Criterion's two workers (its longest test then bounds it)
    meson test -C "$clang_build" --no-rebuild --print-errorlogs --timeout-multiplier 4 gpt --test-args=--jobs=2 ||
        status=1
fi
exit "$status"
