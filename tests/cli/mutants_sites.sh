#!/usr/bin/env bash
# scripts/mutants.py --list: the sites it would mutate in a small C file,
# and none in comments, strings, preprocessor lines or message formatting.
. "$(dirname "$0")/common.bash"
: "${OB_SOURCE_DIR:?}"
cat >"$tmp/s.c" <<'C'
#include <stdio.h> /* a < b */
/* a comment: x <= y && z
 * spanning lines: a != b */
static int f(int a, int b)
{
    if (a <= b && b != 0) return a - b; /* a > b */
    fprintf(stderr, "a < b: %d\n", a < b);
    const char *s = "x == y || z";
    return p->n > 1 ? a++ : (int)fabs(0.5 + s[0]);
    int y = a + b; /* a comment begun after code
                      goes on: a - b */ return y == 1;
    p->n = a;
    free(p);
    int z = f(a, b);
    g(a); h(b);
    return 0;
}
C
out=$(python3 "$OB_SOURCE_DIR/scripts/mutants.py" --list "$tmp/s.c")
rc=$?
check "--list exits 0 (rc $rc)" test "$rc" -eq 0
cat >"$tmp/want" <<'W'
s.c:6:     if (a < b && b != 0) return a - b; /* a > b */
s.c:6:     if (a <= b && b == 0) return a - b; /* a > b */
s.c:6:     if (a <= b || b != 0) return a - b; /* a > b */
s.c:6:     if (a <= b && b != 0) return a + b; /* a > b */
s.c:9:     return p->n >= 1 ? a++ : (int)fabs(0.5 + s[0]);
s.c:9:     return p->n > 1 ? a++ : (int)fabs(0.5 - s[0]);
s.c:9:     return p->n > 1 ? a++ : (int)fabs(0.25 + s[0]);
s.c:9:     return p->n > 1 ? a++ : (int)(0.5 + s[0]);
s.c:9:     return p->n > 1 ? a-- : (int)fabs(0.5 + s[0]);
s.c:10:     int y = a - b; /* a comment begun after code
s.c:11:                       goes on: a - b */ return y != 1;
s.c:12:     if (0) { p->n = a; }
s.c:16:     return 1;
W
check "the sites: comparisons, logic, arithmetic, constants, returns, a statement skipped (not a release, a declaration or two statements); not ->, comments (over lines too), strings or messages" \
  diff "$tmp/want" <(sed "s|^$tmp/||" <<<"$out")
python3 "$OB_SOURCE_DIR/scripts/mutants.py" --list --lines 9-9 "$tmp/s.c" >"$tmp/l9"
check "--lines 9-9: line 9's sites only" test "$(grep -c '^' "$tmp/l9")" -eq 5 -a "$(grep -vc '^[^:]*:9:' "$tmp/l9")" -eq 0
python3 "$OB_SOURCE_DIR/scripts/mutants.py" --list --lines 9 "$tmp/s.c" 2>"$tmp/err"
rc=$?
check "--lines 9: bad input (rc $rc)" test "$rc" -eq 2
check "... says what it expected" grep -q 'expected A-B' "$tmp/err"
# --survivors: a log that names no survivor of the file is refused before
# anything is built
printf '  kill %s:6: if (a < b) return 0;   (3 s)\n  SURV other.c:6: x   (2 s)\n' "$tmp/s.c" >"$tmp/m.log"
python3 "$OB_SOURCE_DIR/scripts/mutants.py" --survivors "$tmp/m.log" "$tmp/s.c" optbench x 2>"$tmp/err"
rc=$?
check "--survivors LOG without one of FILE: bad input (rc $rc)" test "$rc" -eq 2
check "... says so: $(cat "$tmp/err")" grep -q "no survivor of $tmp/s.c in it" "$tmp/err"
python3 "$OB_SOURCE_DIR/scripts/mutants.py" --survivors "$tmp/none.log" "$tmp/s.c" optbench x 2>"$tmp/err"
rc=$?
check "--survivors with no such file: bad input (rc $rc)" test "$rc" -eq 2 -a -s "$tmp/err"
exit $fail
