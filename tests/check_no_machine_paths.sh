#!/usr/bin/env bash
# check_no_machine_paths.sh SOURCE_ROOT - no file of the repository names a package
# registry's host or a path of one machine (packages are fetched by name; programs find
# their data by mygpt_data_dir's rule). Skips (77) outside a git checkout.
set -uo pipefail
cd "$1" || exit 1
git rev-parse --git-dir >/dev/null 2>&1 || { echo "not a git checkout"; exit 77; }
pattern='registry\.npmjs|registry\.yarnpkg|pypi\.org|files\.pythonhosted|deb\.debian\.org|/work/|/tmp/fresh|/home/[a-z]|/root/'
hits=$(git ls-files -z | xargs -0 grep -nIE "$pattern" -- 2>/dev/null | grep -v '^tests/check_no_machine_paths.sh:')
if [ -n "$hits" ]; then
    echo "machine paths or registry hosts in the repository:"
    echo "$hits"
    exit 1
fi
echo "no machine paths, no registry hosts"
