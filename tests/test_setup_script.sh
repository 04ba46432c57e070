#!/usr/bin/env bash
# test_setup_script.sh ROOT - scripts/setup.sh on a machine without apt-get: with a PATH
# of this machine's programs less apt-get and dpkg (a folder of links), `setup.sh --check`
# finds the compiler, the tools and the libraries and goes on (status 0); with meson
# hidden too, or with pkg-config seeing no library, it fails with one line naming what
# is missing and one naming the install command of the package manager it finds
# (Homebrew's, dnf's or pacman's: a program of that name in PATH; none is ever run to
# install). Installs, builds and fetches nothing. And scripts/apt.sh, with a fake apt-get:
# it waits while another apt holds the locks, and says any other failure at once.
set -uo pipefail
root=$(cd "${1:?usage: test_setup_script.sh ROOT}" && pwd)
bad=0
complain() { echo "test_setup_script: $*"; bad=1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# This machine's programs, each a link in one folder, without the Debian package tools
# (and without any other package manager, so that each case below adds its own)
hidden='^(apt|apt-get|apt-cache|dpkg|dpkg-query|brew|dnf|pacman)$'
mkdir -p "$work/bin"
IFS=: read -r -a dirs <<<"$PATH"
declare -A seen=()
for d in "${dirs[@]}"; do
    [ -d "$d" ] || continue
    links=()
    for p in "$d"/*; do
        name=${p##*/}
        [[ $name =~ $hidden ]] || [ -n "${seen[$name]:-}" ] || [ ! -x "$p" ] && continue
        seen[$name]=1
        links+=("$p")
    done
    [ ${#links[@]} -eq 0 ] || ln -s -t "$work/bin" "${links[@]}"
done
[ -e "$work/bin/meson" ] && [ -e "$work/bin/pkg-config" ] ||
    { echo "test_setup_script: meson or pkg-config is not installed"; exit 1; }

# Runs setup.sh --check with PATH=$1 (and the environment given after it): status, out, err
run_check() {
    local path=$1
    shift
    env "$@" PATH="$path" bash "$root/scripts/setup.sh" --check >"$work/out" 2>"$work/err"
    status=$?
}

# 1. everything there: it says so and goes on
run_check "$work/bin"
[ "$status" -eq 0 ] || complain "all there: status $status: $(cat "$work/err")"
grep -q "no apt-get here" "$work/out" || complain "all there: it did not check without apt-get: $(cat "$work/out")"

# 2. meson hidden, a Homebrew in PATH: it names meson and brew's command
mkdir -p "$work/nomeson"
cp -P "$work/bin"/* "$work/nomeson/"
rm "$work/nomeson/meson"
printf '#!/bin/sh\nexit 1\n' >"$work/brew"
chmod +x "$work/brew"
ln -s "$work/brew" "$work/nomeson/brew"
run_check "$work/nomeson"
[ "$status" -eq 1 ] || complain "no meson: status $status, not 1"
grep -q "missing: .*meson" "$work/err" || complain "no meson: meson not named: $(cat "$work/err")"
grep -q "brew install .*libomp.* meson " "$work/err" || complain "no meson: no brew command: $(cat "$work/err")"
[ "$(wc -l <"$work/err")" -eq 2 ] || complain "no meson: not two lines: $(cat "$work/err")"

# 3. no library seen by pkg-config, dnf in PATH: each library named, dnf's command
mkdir -p "$work/nolibs" "$work/dnfbin"
ln -s "$work/brew" "$work/dnfbin/dnf"
run_check "$work/dnfbin:$work/bin" PKG_CONFIG_LIBDIR="$work/nolibs" PKG_CONFIG_PATH=
[ "$status" -eq 1 ] || complain "no libraries: status $status, not 1"
for lib in libpcre2-8 sleef libcurl libcrypto; do
    grep -q "missing: .*$lib (pkg-config)" "$work/err" || complain "no libraries: $lib not named: $(cat "$work/err")"
done
grep -q "sudo dnf install .*sleef-devel" "$work/err" || complain "no libraries: no dnf command: $(cat "$work/err")"
grep -q "criterion.*without the test suites" "$work/out" || complain "no libraries: Criterion's absence not said"

# 4. the same with pacman
mv "$work/dnfbin/dnf" "$work/dnfbin/pacman"
run_check "$work/dnfbin:$work/bin" PKG_CONFIG_LIBDIR="$work/nolibs" PKG_CONFIG_PATH=
grep -q "sudo pacman -S --needed .*sleef" "$work/err" || complain "pacman: no pacman command: $(cat "$work/err")"

# 5. scripts/apt.sh, which every script installs with, waits while another apt holds the
# locks and then goes on; any other failure is apt-get's at once. A fake apt-get that says
# "Could not get lock" for its first $1 calls (counted in a file), then succeeds; sudo is
# not needed (the test runs as whoever runs it: id is faked to say root).
fake_apt() {
    mkdir -p "$work/aptbin"
    cat >"$work/aptbin/apt-get" <<EOS
#!/bin/sh
n=\$(cat "$work/apt-calls" 2>/dev/null || echo 0); n=\$((n + 1)); echo "\$n" >"$work/apt-calls"
echo "apt-get \$*" >>"$work/apt-args"
[ "\$n" -le $1 ] && { echo "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 1 (apt-get)" >&2; exit 100; }
[ "$2" = broken ] && { echo "E: Unable to locate package nosuch" >&2; exit 100; }
exit 0
EOS
    printf '#!/bin/sh\necho 0\n' >"$work/aptbin/id"
    printf '#!/bin/sh\n' >"$work/aptbin/sleep" # no real wait in a test
    chmod +x "$work/aptbin"/*
    rm -f "$work/apt-calls" "$work/apt-args"
}
fake_apt 2 ok
PATH="$work/aptbin:$PATH" bash "$root/scripts/apt.sh" install --no-install-recommends hostname >"$work/out" 2>"$work/err"
status=$?
[ "$status" -eq 0 ] || complain "apt.sh, locked twice: status $status: $(cat "$work/err")"
[ "$(cat "$work/apt-calls")" = 3 ] || complain "apt.sh, locked twice: $(cat "$work/apt-calls") calls, not 3"
grep -q "waiting for it" "$work/err" || complain "apt.sh, locked twice: the wait was not said: $(cat "$work/err")"
grep -q -- "-y install --no-install-recommends hostname" "$work/apt-args" ||
    complain "apt.sh: not called as apt-get -qq -y install ...: $(tail -1 "$work/apt-args")"
fake_apt 0 broken
PATH="$work/aptbin:$PATH" bash "$root/scripts/apt.sh" install nosuch >"$work/out" 2>"$work/err"
status=$?
[ "$status" -eq 100 ] || complain "apt.sh, no such package: status $status, not apt-get's 100"
[ "$(cat "$work/apt-calls")" = 1 ] || complain "apt.sh, no such package: tried $(cat "$work/apt-calls") times"
grep -q "Unable to locate package nosuch" "$work/err" || complain "apt.sh: apt-get's error not said: $(cat "$work/err")"
fake_apt 1000 ok
PATH="$work/aptbin:$PATH" MYGPT_APT_WAIT=0 bash "$root/scripts/apt.sh" update >"$work/out" 2>"$work/err"
status=$?
[ "$status" -eq 100 ] && grep -q "Could not get lock" "$work/err" ||
    complain "apt.sh, a lock never let go: status $status: $(cat "$work/err")"

[ "$bad" -eq 0 ] && echo "test_setup_script: setup.sh without apt-get checks, names and goes on; apt.sh waits for apt's locks"
exit "$bad"
