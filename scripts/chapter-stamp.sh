# chapter-stamp.sh - sourced by check-chapter.sh and tests/check_examples.sh: the stamp a
# long chapter run leaves once it matched its expected output, so that the same check is
# not run twice in one build (the two README commands train the book's model once).
#
# chapter_stamp_path PROGRAM [ARGS...]: build/chapters/.verified/NAME[ARGS joined], where a
#   run of PROGRAM with ARGS leaves its stamp. The stamp holds the key, then the expected
#   file's path.
# chapter_stamp_key PROGRAM EXPECTED [ARGS...]: the sha256 of what the run's result depends
#   on: the program, the expected output, the arguments, every file of the data folder
#   (MYGPT_DATA). Only arguments that are flags (--smoke, --book) leave a stamp
#   (chapter_stamp_args): an argument naming a file is a result the key cannot hold.
# chapter_stamp_args [ARGS...]: whether every argument is a bare --flag.
chapter_stamp_path() {
    local prog=$1 suffix
    shift
    suffix=$(printf '%s' "$@" | tr -c 'A-Za-z0-9_-' '_')
    printf '%s/.verified/%s%s\n' "$(dirname "$prog")" "$(basename "$prog")" "$suffix"
}

chapter_stamp_key() {
    local prog=$1 expected=$2 data
    shift 2
    data=${MYGPT_DATA:-$(dirname "$prog")/../data}
    { chapter_sha256 "$prog" "$expected"
      printf '%s\n' "$@" | chapter_sha256
      find "$data/" -maxdepth 1 -type f 2>/dev/null | LC_ALL=C sort |
          while IFS= read -r f; do chapter_sha256 "$f"; done
    } | cut -d' ' -f1 | chapter_sha256 | cut -c1-64
}

# sha256sum (GNU coreutils), or macOS's shasum, which prints the same "hash  name" lines
chapter_sha256() {
    if command -v sha256sum >/dev/null 2>&1; then sha256sum "$@"; else shasum -a 256 "$@"; fi
}

chapter_stamp_args() {
    local arg
    for arg in "$@"; do
        [[ $arg =~ ^--[a-z0-9-]+$ ]] || return 1
    done
}
