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
for opt in $("$bin" --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
    escaped=$(printf '%s' "$opt" | sed 's/-/\\\\-/g')
    # Whole options only: --qkv must not pass for --qkv-bias.
    if ! grep -E -q -- "${escaped}(\$|[^a-z\\])" "$page"; then
        echo "$page does not document $opt"
        missing=1
    fi
done
exit $missing
