#!/bin/sh
# layers.sh: no folder reaches up (doc/architecture.md, "The tree").
#
# The core's folders are layered, each including only its own and those
# below it: base < kernels < files < locate < formats < text < storage <
# attention < decoder < architectures < models < pipeline < families; a family includes no other family
# (only the registry, families/families.c, names them all), and an
# architecture no other architecture (its files include architecture.h and
# their own header; only the registry, architectures/architectures.c, names
# them all).  The core includes nothing of the
# renderer or the front ends, the renderer nothing of the front ends, and
# nothing but src/tui/ includes curses.  Every #include of the tree is
# checked, headers and sources alike; the formats folder may also include
# the messages protoc-c compiles from its .proto files (core/formats/*.pb-c.h).
top=${top_srcdir:-.}
cd "$top" || exit 1
fail=0

rank() {
    case $1 in
    base) echo 0 ;;
    kernels) echo 1 ;;
    files) echo 2 ;;
    locate) echo 3 ;;
    formats) echo 4 ;;
    text) echo 5 ;;
    storage) echo 6 ;;
    attention) echo 7 ;;
    decoder) echo 8 ;;
    architectures) echo 9 ;;
    models) echo 10 ;;
    pipeline) echo 11 ;;
    families) echo 12 ;;
    *) echo 99 ;;
    esac
}

# The folder of a core path below src/core/ or include/attnscope/ ("families/model" for a family).
folder_of() {
    case $1 in
    families/*/*) echo "$1" | cut -d/ -f1-2 ;;
    */*) echo "$1" | cut -d/ -f1 ;;
    *) echo "" ;;
    esac
}

# (protoc-c's output, src/core/formats/*.pb-c.[ch] in a build in the tree, is generated: not checked.)
for f in $(find src/core include/attnscope -name '*.[ch]' ! -name '*.pb-c.[ch]' | sort); do
    rel=${f#src/core/}
    rel=${rel#include/attnscope/}
    own=$(folder_of "$rel")
    if [ -z "$own" ]; then
        echo "$f: a core file outside the layered folders"
        fail=1
        continue
    fi
    own_top=${own%%/*}
    grep -n '^#include "' "$f" | while IFS= read -r line; do
        inc=$(printf '%s' "$line" | sed 's/^[0-9]*:#include "\([^"]*\)".*/\1/')
        no=${line%%:*}
        case $inc in
        config.h) continue ;;
        */*) ;;
        *)
            # A module's own internal header, beside it in its folder (bpe_internal.h).
            [ -f "$(dirname "$f")/$inc" ] && case $f in src/core/*) true ;; *) false ;; esac && continue
            echo "$f:$no: includes $inc, outside the tree's layers"; exit 1 ;;
        esac
        case $inc in
        core/formats/*.pb-c.h)
            # A file format's messages, compiled by protoc-c: the formats folder's own.
            [ "$own_top" = formats ] && continue
            echo "$f:$no: only the formats folder reads protoc-c's $inc"; exit 1 ;;
        render/* | front/* | tui/*) echo "$f:$no: the core includes $inc" ; exit 1 ;;
        attnscope/*) ;;
        *) echo "$f:$no: includes $inc, outside the tree's layers"; exit 1 ;;
        esac
        target=$(folder_of "${inc#attnscope/}")
        target_top=${target%%/*}
        if [ "$(rank "$target_top")" -gt "$(rank "$own_top")" ]; then
            echo "$f:$no: $own reaches up to $target ($inc)"
            exit 1
        fi
        if [ "$target_top" = families ] && [ "$own_top" = families ] && [ "$target" != "$own" ] &&
            [ "$rel" != families/families.c ]; then
            echo "$f:$no: $own includes another family's $inc"
            exit 1
        fi
        if [ "$target_top" = architectures ] && [ "$own_top" = architectures ] &&
            [ "$rel" != architectures/architectures.c ]; then
            stem=$(basename "$rel" | sed 's/[._].*//')
            case $(basename "$inc") in
            architecture.h | "$stem".h) ;;
            *) echo "$f:$no: an architecture includes another's $inc"; exit 1 ;;
            esac
        fi
    done || fail=1
done

# The renderer knows nothing of the front ends; the front ends nothing of the terminal.
if grep -rn '#include "\(front\|tui\)/' src/render --include='*.[ch]'; then
    echo "src/render includes the front ends (above)"
    fail=1
fi
if grep -rn '#include "tui/' src/front --include='*.[ch]'; then
    echo "src/front includes the terminal's code (above)"
    fail=1
fi
if grep -rn '#include.*curses' src/core src/render src/front --include='*.[ch]'; then
    echo "only src/tui/ talks to curses (above)"
    fail=1
fi
# The calls follow the layers too (the includes above cannot see a call made
# through a declaration a lower header carries): from the built objects'
# symbols (nm), no object references a symbol defined in a folder above its
# own, a family another family's (the registry, families/families.o, names
# them all and every family may call it), an
# architecture another architecture's (the shared architecture*.o, experts.o
# and the registry aside), the core the renderer's or the front ends', the
# renderer the front ends'.
build=${top_builddir:-.}
objects=$(cd "$build" && find src/core src/render src/front -name '*.o' 2>/dev/null | sort)
if [ -z "$objects" ]; then
    echo "no built objects under $build/src: build attnscope before tests/layers.sh"
    fail=1
fi
for o in $objects; do
    case $o in
    src/core/families/*/*) folder=$(echo "$o" | cut -d/ -f3-4) ;;
    src/core/*) folder=$(echo "$o" | cut -d/ -f3) ;;
    src/render/*) folder=render ;;
    *) folder=front ;;
    esac
    nm -g --defined-only "$build/$o" | awk -v o="$o" -v f="$folder" 'NF == 3 && $2 ~ /[TDBRCVWG]/ { print "D", $3, f, o }'
    nm -u "$build/$o" | awk -v o="$o" -v f="$folder" '{ print "U", $NF, f, o }'
done >"${TMPDIR:-/tmp}/layers-syms.$$"
awk '
function top(f) { sub(/\/.*/, "", f); return f }
function rank(f,  t) {
    t = top(f)
    if (t == "base") return 0; if (t == "kernels") return 1; if (t == "files") return 2
    if (t == "locate") return 3; if (t == "formats") return 4; if (t == "text") return 5
    if (t == "storage") return 6; if (t == "attention") return 7; if (t == "decoder") return 8
    if (t == "architectures") return 9; if (t == "models") return 10; if (t == "pipeline") return 11
    if (t == "families") return 12
    if (t == "render") return 20
    if (t == "front") return 30
    return 99
}
function stem(o) { sub(/.*\//, "", o); sub(/[._].*/, "", o); return o }
function shared(s) { return s == "architecture" || s == "architectures" || s == "experts" }
$1 == "D" { folder[$2] = $3; object[$2] = $4; next }
{ uses[++n] = $0 }
END {
    bad = 0
    for (i = 1; i <= n; i++) {
        split(uses[i], u, " ")
        s = u[2]
        if (!(s in folder))
            continue
        to = folder[s]; from = u[3]
        if (rank(to) > rank(from)) {
            print u[4] ": " from " calls up to " to ": " s " (" object[s] ")"; bad = 1
        } else if (top(to) == "families" && top(from) == "families" && to != from &&
                   to != "families" && u[4] !~ /families\/families\.o$/) {
            print u[4] ": a family uses another family'"'"'s " s " (" object[s] ")"; bad = 1
        } else if (top(to) == "architectures" && top(from) == "architectures" &&
                   !shared(stem(u[4])) && !shared(stem(object[s])) && stem(u[4]) != stem(object[s])) {
            print u[4] ": an architecture uses another'"'"'s " s " (" object[s] ")"; bad = 1
        }
    }
    exit bad
}' "${TMPDIR:-/tmp}/layers-syms.$$" || fail=1
rm -f "${TMPDIR:-/tmp}/layers-syms.$$"

# Sizes (doc/architecture.md, "Sizes"): a source file under 800 lines, a
# function of at most 120, a folder of at most 16 files; past any, a module
# is split along its seams.
for f in $(find src include -name '*.[ch]' ! -name '*.pb-c.[ch]' | sort); do
    n=$(wc -l <"$f")
    if [ "$n" -ge 800 ]; then
        echo "$f: $n lines, 800 or more: split it along a seam"
        fail=1
    fi
    # A function: its name's line, then a brace alone in column 0, to the brace that closes it there.
    awk -v f="$f" '/^\{/ { start = NR; name = prev }
                   /^\}/ && start { if (NR - start + 1 > 120) { print f ":" start ": " name ": " NR - start + 1 " lines, past 120: split it"; bad = 1 } start = 0 }
                   { prev = $0 } END { exit bad }' "$f" || fail=1
done
# No config struct of 40 fields: a part's settings are a member of their own (struct decoder_moe).
fields=$(awk '/^struct decoder_config \{/ { inside = 1; next } inside && /^\};/ { inside = 0 }
              inside && /^    [a-z].*;/ { sub(/\/\*.*/, ""); n += gsub(/,/, ",") + 1 } END { print n + 0 }' \
             include/attnscope/decoder/decoder_config.h)
if [ "$fields" -ge 40 ]; then
    echo "include/attnscope/decoder/decoder_config.h: struct decoder_config has $fields fields, 40 or more: group a part's into a member"
    fail=1
fi
for d in $(find src -type d | sort); do
    n=$(find "$d" -maxdepth 1 -name '*.c' ! -name '*.pb-c.c' | wc -l)
    if [ "$n" -gt 16 ]; then
        echo "$d: $n .c files, past 16: split the folder"
        fail=1
    fi
done
# A part is named in few files (doc/architecture.md, "Adding a mixer"): the
# files that name each of these may not grow past what they are now, on the
# way to the targets (issue 63: a part in at most 8 source files, the n x n
# stages in at most 5).  A change that takes one lower lowers its number here.
spread() {
    # $1 what, $2 the pattern (grep -E), $3 the most files, $4 the target
    n=$(grep -rlE "$2" src include --include='*.[ch]' | grep -vc '\.pb-c\.')
    if [ "$n" -gt "$3" ]; then
        echo "$1 is named in $n source files, more than the $3 it was (the target: $4): keep it in its part's modules"
        fail=1
    fi
}
spread "the attention sinks" '\bsinks?\b|sinks_off' 42 8
spread "the router and experts" '\brouter\b|experts_off|n_experts_used' 39 8
spread "the softcap" 'softcap' 17 8
spread "the n x n stages" '\b(STAGE|VIEW)_(SCORES|MASKED|MASK|SCALED|WEIGHTS)\b' 14 5

[ "$fail" -eq 0 ] && echo "every include and every call follows the layers; no file, function, folder or config past its size"
exit "$fail"
