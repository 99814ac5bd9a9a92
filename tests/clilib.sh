# clilib.sh: what the command-line tests (cli.sh, compare.sh) share.
#
# Sourced, not run.  The caller sets name (used in the temporary folder's
# name) before sourcing; the folder is removed on exit.  It gives bin (the
# program), src (the source tree), tmp, the counters, fail, and expect (a
# command's exit status and the one line of its message).

set -u
bin="${top_builddir:-.}/attnscope"
src="${top_srcdir:-.}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attnscope-$name-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0
count=0

fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# expect CODE NEEDLE -- ARGS...: exit status CODE and NEEDLE on stderr (one line).
expect() {
    code=$1
    needle=$2
    shift 3
    count=$((count + 1))
    "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
    got=$?
    if [ "$got" -ne "$code" ]; then
        fail "attnscope $*: exit $got, expected $code ($(cat "$tmp/err"))"
    elif ! grep -qF -- "$needle" "$tmp/err"; then
        fail "attnscope $*: stderr lacks '$needle': $(cat "$tmp/err")"
    elif [ "$code" -ne 0 ] && [ "$(grep -c '^attnscope: ' "$tmp/err")" -ne 1 ]; then
        fail "attnscope $*: expected exactly one error line: $(cat "$tmp/err")"
    fi
}
