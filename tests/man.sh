#!/bin/sh
# man.sh: the manual page renders without a single groff warning.
page="${top_srcdir:-.}/doc/attnscope.1"
command -v groff >/dev/null 2>&1 || { echo "groff is not installed (apt-get install groff-base)"; exit 77; }
out=$(groff -man -ww -z "$page" 2>&1)
if [ -n "$out" ]; then
    echo "groff warnings in $page:"
    echo "$out"
    exit 1
fi
# Every long option attnscope accepts is documented.
bin="${top_builddir:-.}/attnscope"
missing=0
# The KEYS summary is the program's key tables (tests/man-keys --update remakes it).
keys_tmp=$(mktemp)
sed -n '/^\.\\" keys: begin/,/^\.\\" keys: end/p' "$page" | sed '1d;$d' >"$keys_tmp.page"
sh "${top_srcdir:-.}/tests/man-keys" "$bin" >"$keys_tmp.made"
if [ ! -s "$keys_tmp.made" ] || ! cmp -s "$keys_tmp.page" "$keys_tmp.made"; then
    echo "$page: the KEYS summary is not what attnscope --help-keys says; run sh tests/man-keys ./attnscope --update"
    diff "$keys_tmp.page" "$keys_tmp.made" | head -10
    missing=1
fi
rm -f "$keys_tmp" "$keys_tmp.page" "$keys_tmp.made"
for opt in $("$bin" --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
    escaped=$(printf '%s' "$opt" | sed 's/-/\\\\-/g')
    # Whole options only: --qkv must not pass for --qkv-bias.
    if ! grep -E -q -- "${escaped}(\$|[^a-z\\])" "$page"; then
        echo "$page does not document $opt"
        missing=1
    fi
done
# Each option is an item of its own in the rendered page, at the start of its line (issue 27,
# item 19: --weights ran on in --learned-positional's paragraph), and FILES comes once.
rendered=$(mktemp)
groff -man -Tascii -P-c -P-u -P-b "$page" 2>/dev/null >"$rendered"
for opt in $("$bin" --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
    if ! grep -E -q -- "^ {7}(-[^ ,]+( [A-Z|]+)?, )*${opt}([ ,=]|\$)" "$rendered"; then
        echo "$page: $opt is not an item of its own (a .TP missing before it?)"
        missing=1
    fi
done
rm -f "$rendered"
# Every stage of the program's stage table (attnscope --help-stages) is named in bold in
# STAGES or TRAINED MODELS, the sections that say what each is.
sections=$(sed -n '/^\.SH STAGES/,/^\.SH FILE FORMATS/p' "$page" | grep '^\.B')
for stage in $("$bin" --help-stages | cut -f1); do
    escaped=$(printf '%s' "$stage" | sed 's/_/\\_/g')
    if ! printf '%s\n' "$sections" | sed 's/\\-/-/g; s/\\_/_/g; s/"//g' | grep -E -q -- "(^|[ ,])${stage}([ ,.]|\$)"; then
        echo "$page: the stage $stage (attnscope --help-stages) is not named in STAGES or TRAINED MODELS"
        missing=1
    fi
done
[ "$(grep -c '^\.SH FILES' "$page")" -eq 1 ] || { echo "$page: more than one FILES section"; missing=1; }
# The examples run in a clone after the quick start: no installed paths
# (issue 13, item 21), and the sample files they name exist.
if sed -n '/^\.SH EXAMPLES/,/^\.SH FILES/p' "$page" | grep -n '/usr/\|/share/attnscope/samples/' | grep -v 'PREFIX'; then
    echo "$page: an example uses an installed path"
    missing=1
fi
for f in $(grep -o 'samples/[a-z0-9\\-]*\(\.csv\|\.walk\)\?' "$page" | sed 's/\\-/-/g' | sort -u); do
    [ -e "${top_srcdir:-.}/$f" ] || { echo "$page names $f, which the source tree lacks"; missing=1; }
done
exit $missing
