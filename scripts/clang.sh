#!/usr/bin/env bash
# clang.sh - builds mygpt with clang and LLVM's OpenMP runtime (Debian 12: clang 14 and
# libomp-14-dev, installed when missing) into build-clang/, then runs the test suite there.
# The build must have no warning (-Dwerror=true) and give gcc's bits: tools/check_unchanged.sh build
# build-clang compares every chapter and the tool's commands, output by output.
#
#   bash scripts/clang.sh            # install, configure, build, run the whole suite
#   bash scripts/clang.sh --build    # install, configure and build only
#   bash scripts/clang.sh SUITE...   # then only these suites (meson test --suite)
set -euo pipefail
MYGPT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export CC=${CC:-clang}
export MYGPT_BUILD=${MYGPT_BUILD:-$MYGPT_ROOT/build-clang}
case "$(basename "$CC")" in
clang*) ;;
*) echo "clang.sh: CC=$CC is not a clang" >&2; exit 2 ;;
esac
if [ -f "$MYGPT_BUILD/meson-logs/meson-log.txt" ] &&
    ! grep -q "^C compiler for the host machine: .*clang" "$MYGPT_BUILD/meson-logs/meson-log.txt"; then
    echo "clang.sh: $MYGPT_BUILD was configured with another compiler; remove it or set MYGPT_BUILD" >&2
    exit 2
fi
# no warning: any is an error in this build (a build configured before is set so too)
export MYGPT_MESON_ARGS="-Dwerror=true ${MYGPT_MESON_ARGS:-}"
if [ -f "$MYGPT_BUILD/build.ninja" ]; then
    meson configure "$MYGPT_BUILD" -Dwerror=true >/dev/null
fi
source "$MYGPT_ROOT/scripts/setup.sh"
# LLVM 14's libomp registers each process in /dev/shm/__KMP_REGISTERED_LIB_<pid>_<uid> and reads
# the file a dead process left there under the same pid; an empty one (left by a process started
# under a file-size limit before tests/fsize_tool.c) stops the new process with SIGBUS. Only empty
# files of processes that no longer run are removed.
for f in /dev/shm/__KMP_REGISTERED_LIB_*_"$(id -u)"; do
    pid=${f#/dev/shm/__KMP_REGISTERED_LIB_}
    pid=${pid%_*}
    if [ -f "$f" ] && [ ! -s "$f" ] && [ -O "$f" ] && ! kill -0 "$pid" 2>/dev/null; then
        rm -f "$f"
    fi
done
[ "${1:-}" = --build ] && exit 0
suites=()
for s in "$@"; do suites+=(--suite "$s"); done
meson test -C "$MYGPT_BUILD" --print-errorlogs "${suites[@]}"
