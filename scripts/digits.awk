# digits.awk - how float text is compared where the last digit may differ (a float32 sum
# grouped otherwise), shared by the chapter checks (scripts/check-chapter.sh) and the
# Markdown examples (tests/check_examples.sh): the text around the numbers must be
# equal, integers equal, and each other number within one unit of the expected one's
# last printed digit.

function abs(x) { return x < 0 ? -x : x }

# one unit in the last printed digit of a number written as text
function unit(s,    m, e, p, dec) {
    m = s; e = 0
    p = match(s, /[eE]/)
    if (p) { m = substr(s, 1, p - 1); e = substr(s, p + 1) + 0 }
    p = index(m, ".")
    dec = p ? length(m) - p : 0
    return 10 ^ (e - dec)
}

# splits a line into its numbers (nums[1..n], nums[0] = n) and the text around them
# (returned, each number a #)
function numbers(line, nums,    n, skel) {
    n = 0; skel = ""
    while (match(line, /[-+]?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?/)) {
        skel = skel substr(line, 1, RSTART - 1) "#"
        nums[++n] = substr(line, RSTART, RLENGTH)
        line = substr(line, RSTART + RLENGTH)
    }
    nums[0] = n
    return skel line
}

# whether got is want but for numbers each within one unit of want's last digit
function within_digit(want, got,    ws, gs, i) {
    if (numbers(want, ws) != numbers(got, gs) || ws[0] != gs[0]) return 0
    for (i = 1; i <= ws[0]; i++) {
        if (ws[i] !~ /[.eE]/ && ws[i] != gs[i]) return 0 # integers: equal
        if (abs(ws[i] - gs[i]) > unit(ws[i]) * (1 + 1e-9)) return 0
    }
    return 1
}
