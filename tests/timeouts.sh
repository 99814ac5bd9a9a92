#!/bin/sh
# timeouts.sh: every Check case has a timeout of its own, and make check
# scales them (issue 48: a case doing real work ran under Check's default
# 4 s, and a loaded machine failed it).  A timeout is a hang guard, never a
# timing: each TCase a tests/*/check_*.c creates is given one by
# tcase_set_timeout, and the tests' environment exports
# CK_TIMEOUT_MULTIPLIER (configure's: 5 under --enable-sanitizers).
top=${top_srcdir:-.}
cd "$top" || exit 1
fail=0

for f in tests/*/check_*.c; do
    # Every "NAME = tcase_create(" (with or without "TCase *") has its "tcase_set_timeout(NAME,":
    # as many of these for a name as there are of those (a variable may make two TCases).
    missing=$(awk '
        { line = $0
          while (match(line, /[A-Za-z_][A-Za-z0-9_]* = tcase_create\(/)) {
              name = substr(line, RSTART, RLENGTH); sub(/ = tcase_create\(/, "", name)
              made[name]++; line = substr(line, RSTART + RLENGTH) }
          line = $0
          while (match(line, /tcase_set_timeout\([A-Za-z_][A-Za-z0-9_]*,/)) {
              name = substr(line, RSTART + 18, RLENGTH - 19)
              timed[name]++; line = substr(line, RSTART + RLENGTH) } }
        END { for (n in made) if (timed[n] < made[n]) printf "%s ", n }' "$f")
    if [ -n "$missing" ]; then
        echo "FAIL: $f: a TCase without tcase_set_timeout: $missing"
        fail=1
    fi
done
grep -q 'CK_TIMEOUT_MULTIPLIER=' tests/Makefile.inc ||
    { echo "FAIL: tests/Makefile.inc exports no CK_TIMEOUT_MULTIPLIER"; fail=1; }
grep -q 'TIMEOUT_MULTIPLIER=5' configure.ac ||
    { echo "FAIL: configure.ac does not scale the timeouts under the sanitizers"; fail=1; }
exit $fail
