#!/usr/bin/env bash
# test_check_chapter.sh CHECKER - the chapter checker's comparisons:
# "~DIGIT" lines allow one unit in the expected number's last printed digit and no more,
# integers must be equal, "~MAX=B" bounds noise lines, words and other lines are exact.
set -uo pipefail
checker=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failures=0

# case EXPECT(pass|fail) EXPECTED_LINE PRINTED_LINE
case_() {
    local want=$1 expected=$2 printed=$3 status
    printf '%s\n' "$printed" >"$dir/printed"
    printf '#!/bin/sh\ncat "%s"\n' "$dir/printed" >"$dir/prog"
    chmod +x "$dir/prog"
    printf 'header\n%s\n' "$expected" >"$dir/expected"
    sed -i '1s/^/header\n/' "$dir/printed"
    bash "$checker" "$dir/prog" "$dir/expected" >/dev/null 2>&1 && status=pass || status=fail
    if [ "$status" != "$want" ]; then
        echo "FAIL: expected '$expected' vs printed '$printed': $status, wanted $want"
        failures=$((failures + 1))
    fi
}

case_ fail '~DIGIT   0 |   142.0900 |  13.5434' '  0 |   142.1164 |  13.5434'   # off by 0.0264: more than one unit
case_ pass '~DIGIT   0 |   142.1164 |  13.5434' '  0 |   142.1165 |  13.5433'
case_ fail '~DIGIT   0 |   142.1164 |  13.5434' '  0 |   142.1166 |  13.5434'
case_ fail '~DIGIT   0 |   142.1164 |  13.5434' '  1 |   142.1164 |  13.5434'   # integers are equal
case_ pass '~DIGIT tensor([[ 1.7314e+03, -1.0134e+00],' 'tensor([[ 1.7315e+03, -1.0135e+00],'
case_ fail '~DIGIT tensor([[ 1.7314e+03, -1.0134e+00],' 'tensor([[ 1.7316e+03, -1.0134e+00],'
case_ fail '~DIGIT tensor([[ 1.7314e+03, -1.0134e+00],' 'tensor([[ 1.7314e+03, -1.0132e+00],'
case_ fail '~DIGIT tensor([[ 1.4797, -4.3534],' 'tensor([[ 1.4797; -4.3534],'           # words exact
case_ fail '~DIGIT tensor([[ 1.4797, -4.3534],' 'tensor([[ 1.4797, -4.3534, 1.0],'       # count
case_ pass '~MAX=1e-06 std/mean = 2.10e-07' 'std/mean = 8.34e-08'
case_ fail '~MAX=1e-06 std/mean = 2.10e-07' 'std/mean = 2.00e-06'
case_ fail '~MAX=1e-06 std/mean = 2.10e-07' 'std/mean: 8.34e-08'
case_ pass 'plain 1.4797' 'plain 1.4797'
case_ fail 'plain 1.4797' 'plain 1.4798'                                               # exact lines
case_ fail 'plain 1.4797' $'plain 1.4797\nextra'                                       # extra output

if [ "$failures" -ne 0 ]; then
    echo "$failures checker case(s) wrong"
    exit 1
fi
echo "checker: every case as expected"
