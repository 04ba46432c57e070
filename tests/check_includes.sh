#!/usr/bin/env bash
# check_includes.sh ROOT [LIBMYGPT.a] - the library's layers hold.
#
# lib/ is built in layers, each a folder:  base < kernels < model < {learn, speak} < io.
#   1. A file of lib/LAYER/ includes headers of its own folder and of folders below it,
#      never above and never beside (learn/ and speak/ do not include each other), and
#      names a private header by its folder ("model/block.h", not "block.h").
#   2. Each public header (lib/include/mygpt/*.h) belongs to one layer (the table below)
#      and includes only public headers of its layer or below.
#   3. Programs (cli/, chapters/, trainer/, args/) include only the public headers
#      (<mygpt.h>, "mygpt/...") and their own; tests/ and bench/ may also include private
#      headers, to test and time what is inside.
#   4. Given the static library: no object calls into a layer above its own, and no two
#      objects call each other through any chain (no circle among lib/'s files).
# Prints each violation and exits 1; prints a summary line and exits 0 otherwise.
set -euo pipefail
root=${1:?usage: check_includes.sh ROOT [LIBMYGPT.a]}
lib=${2:-}

# the layers, lowest first; learn and speak share a rank but may not include each other
rank() {
    case $1 in
    base) echo 0 ;; kernels) echo 1 ;; model) echo 2 ;; learn | speak) echo 3 ;; io) echo 4 ;;
    *) echo -1 ;;
    esac
}

# the layer each public header belongs to
public_layer() {
    case $1 in
    error.h | rng.h | print.h) echo base ;;
    attention.h | kernels.h | layers.h | posenc.h | weights.h | tensor.h) echo kernels ;;
    config.h | gpt.h | kv_cache.h | quantize.h | lora.h) echo model ;;
    train.h) echo learn ;;
    sample.h | generate.h | llama2c_sample.h) echo speak ;;
    data.h | tokenizer.h | checkpoint.h | svg.h | train_state.h | sp_tokenizer.h) echo io ;;
    *) echo '' ;;
    esac
}

bad=0
checked=0
complain() { echo "check_includes: $*"; bad=1; }

# may a file of layer $1 include a header of layer $2?
allowed() {
    [ "$1" = "$2" ] && return 0
    local a b
    a=$(rank "$1") b=$(rank "$2")
    [ "$b" -ge 0 ] && [ "$b" -lt "$a" ]
}

# the layer of an included header name (as written between the quotes), or '' if none
included_layer() {
    case $1 in
    mygpt/*) public_layer "${1#mygpt/}" ;;
    */*) local folder=${1%%/*}; [ "$(rank "$folder")" -ge 0 ] && echo "$folder" || echo '' ;;
    *) echo '' ;;
    esac
}

# 1. the library's own files
for dir in "$root"/lib/*/; do
    layer=$(basename "$dir")
    [ "$layer" = include ] && continue
    if [ "$(rank "$layer")" -lt 0 ]; then
        complain "lib/$layer/ is not a layer (base, kernels, model, learn, speak, io)"
        continue
    fi
    for f in "$dir"*.[ch]; do
        [ -e "$f" ] || continue
        while IFS= read -r header; do
            checked=$((checked + 1))
            target=$(included_layer "$header")
            if [ -z "$target" ]; then
                complain "lib/$layer/$(basename "$f") includes \"$header\": name a private header by its folder"
            elif ! allowed "$layer" "$target"; then
                complain "lib/$layer/$(basename "$f") ($layer) includes \"$header\" ($target): above or beside it"
            fi
        done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
    done
done
for f in "$root"/lib/*.[ch]; do
    [ -e "$f" ] && complain "lib/$(basename "$f") is in no layer: it belongs in one of lib/'s folders"
done

# 2. the public headers
for f in "$root"/lib/include/mygpt/*.h; do
    name=$(basename "$f")
    layer=$(public_layer "$name")
    if [ -z "$layer" ]; then
        complain "lib/include/mygpt/$name has no layer in check_includes.sh's table"
        continue
    fi
    while IFS= read -r header; do
        checked=$((checked + 1))
        target=$(included_layer "$header")
        case $header in mygpt/*) ;; *) complain "mygpt/$name includes \"$header\": a public header includes only public headers"; continue ;; esac
        [ -n "$target" ] && allowed "$layer" "$target" ||
            complain "mygpt/$name ($layer) includes \"$header\" (${target:-no layer}): above or beside it"
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
done

# 3. the programs
for dir in cli chapters trainer args; do
    [ -d "$root/$dir" ] || continue
    while IFS= read -r f; do
        while IFS= read -r header; do
            checked=$((checked + 1))
            case $header in
            mygpt.h | mygpt/*) ;;
            */*) complain "${f#"$root"/} includes \"$header\": programs include only the public headers" ;;
            esac
        done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
    done < <(find "$root/$dir" -name '*.[ch]')
done

# 4. the objects: who calls whom (nm), by the layer in each object's name (base_rng.c.o)
calls=0
if [ -n "$lib" ]; then
    edges=$(nm -A "$lib" 2>/dev/null | awk '
        { n = split($1, p, ":"); obj = p[n - 1] }
        NF == 3 && $2 ~ /^[TDBRVW]$/ { def[$3] = obj }
        NF == 2 && $1 ~ /:$/ && $2 ~ /^U$/ { next }
        NF == 3 && $2 == "U" { use[obj, $3] = 1 }
        END { for (k in use) { split(k, q, SUBSEP); if ((q[2] in def) && def[q[2]] != q[1]) print q[1], def[q[2]] } }' |
        sort -u)
    [ -n "$edges" ] || complain "$lib: no calls between its objects found (is it the static library?)"
    while read -r from to; do
        [ -n "$from" ] || continue
        calls=$((calls + 1))
        fl=${from%%_*} tl=${to%%_*}
        allowed "$fl" "$tl" || complain "${from%.o} ($fl) calls into ${to%.o} ($tl): above or beside it"
    done <<<"$edges"
    # a circle: take away every object that calls nothing left, or that nothing left
    # calls; whatever remains calls round
    circle=$(awk '
        { out[$1]++; inc[$2]++; from[NR] = $1; to[NR] = $2; node[$1]; node[$2] }
        END {
            do {
                removed = 0
                for (v in node) if (!(v in gone) && (out[v] == 0 || inc[v] == 0)) {
                    gone[v]; removed = 1
                    for (i = 1; i <= NR; i++) if (!(i in dead) && (to[i] == v || from[i] == v)) {
                        dead[i]; out[from[i]]--; inc[to[i]]--
                    }
                }
            } while (removed)
            for (v in node) if (!(v in gone)) printf "%s ", v
        }' <<<"$edges")
    [ -z "$circle" ] || complain "these objects call each other round a circle: $circle"
fi

if [ "$bad" -ne 0 ]; then
    exit 1
fi
summary="check_includes: $checked includes follow the layers"
[ -z "$lib" ] || summary+=", and $calls calls between the library's objects, with no circle"
echo "$summary"
