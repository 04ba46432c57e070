#!/usr/bin/env bash
# setup.sh - sourced by chapters.sh and test.sh: installs the Debian packages mygpt
# needs (only those missing), then configures and builds into build/.
# Needs: gcc (with libgomp), meson, ninja, pkg-config, Criterion, PCRE2 (the tokenizer's
# Unicode pattern), SLEEF (the loss's exp/log, as PyTorch), libcurl and OpenSSL (mygpt download). Then fetches the GPT-2 vocabulary and the text (scripts/fetch-data.sh).
set -euo pipefail

MYGPT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MYGPT_BUILD=${MYGPT_BUILD:-$MYGPT_ROOT/build}
# cmark-gfm, highlight and chromium: the lessons' site (scripts/site.sh: its pages, the C
# they quote highlighted) and its browser check
PACKAGES=(gcc libc6-dev meson ninja-build pkg-config libcriterion-dev libpcre2-dev libsleef-dev valgrind libopenmpi-dev openmpi-bin
          cmark-gfm highlight chromium)
# mygpt download: HTTP(S) with resuming (libcurl) and SHA-256 (OpenSSL's libcrypto)
PACKAGES+=(libcurl4-openssl-dev libssl-dev)
# CC=clang (scripts/clang.sh): clang and LLVM's OpenMP runtime, libomp, for gcc's libgomp
case "$(basename "${CC:-gcc}")" in clang*) PACKAGES+=(clang libomp-dev) ;; esac

mygpt_install_deps() {
    local missing=()
    for p in "${PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "setup: installing Debian packages: ${missing[*]}"
    local sudo=()
    [ "$(id -u)" -ne 0 ] && sudo=(sudo)
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

mygpt_build() {
    if [ ! -f "$MYGPT_BUILD/build.ninja" ]; then
        echo "setup: configuring $MYGPT_BUILD (meson)"
        local conf
        if ! conf=$(meson setup "$MYGPT_BUILD" "$MYGPT_ROOT" 2>&1); then
            printf '%s\n' "$conf"
            return 1
        fi
    fi
    local started=$SECONDS
    echo "setup: building in $MYGPT_BUILD (ninja; a first build takes 15-30 s)"
    local log
    log=$(mktemp)
    if ! ninja -C "$MYGPT_BUILD" >"$log" 2>&1; then
        cat "$log"
        rm -f "$log"
        return 1
    fi
    rm -f "$log"
    echo "setup: built in $((SECONDS - started)) s"
}

mygpt_install_deps
mygpt_build
export MYGPT_DATA="${MYGPT_DATA:-$MYGPT_ROOT/data}"
if ! bash "$MYGPT_ROOT/scripts/fetch-data.sh"; then
    if [ "${CI:-}" = true ]; then
        echo "setup: the data could not be fetched, and under CI=true missing data is a failure" >&2
        exit 1
    fi
    echo "setup: the data is incomplete; the chapter and tests that need it will report themselves as skipped" >&2
fi
