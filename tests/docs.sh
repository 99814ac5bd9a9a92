#!/bin/sh
# docs.sh: the screens the documents show are the screens attnscope draws.
#
# doc/guide.md embeds sections of the golden screens (tests/golden/screens/),
# which tests/tui.sh compares with the real program; here each embedded
# screen must equal its section, so the guide cannot drift from attnscope.
set -u
src="${top_srcdir:-.}"
bin="$(cd "${top_builddir:-.}" && pwd)/attnscope"
failures=0
count=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attnscope-docs-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

grep -n '^<!-- screen: ' "$src/doc/guide.md" | while IFS= read -r marker; do
    line=${marker%%:*}
    golden=$(printf '%s' "$marker" | sed 's/.*screen: \([^ ]*\) ".*/\1/')
    name=$(printf '%s' "$marker" | sed 's/.*screen: [^ ]* "\(.*\)" (.*/\1/')
    # The fenced block after the marker.
    tail -n +"$((line + 2))" "$src/doc/guide.md" | sed '/^```$/,$d' >"$tmp/shown"
    # The section of the golden file, trailing blank lines cut.
    awk -v name="=== $name" '$0 == name { on = 1; next } on && /^=== / { exit } on { print }' \
        "$src/tests/golden/screens/$golden.txt" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' >"$tmp/golden"
    if [ ! -s "$tmp/golden" ]; then
        echo "FAIL: doc/guide.md:$line: no section '$name' in tests/golden/screens/$golden.txt"
        echo x >>"$tmp/failed"
    elif ! cmp -s "$tmp/shown" "$tmp/golden"; then
        echo "FAIL: doc/guide.md:$line: the screen differs from $golden '$name':"
        diff "$tmp/golden" "$tmp/shown" | head -10
        echo x >>"$tmp/failed"
    fi
    echo x >>"$tmp/count"
done

# The figure README.md shows is what its command draws: the command run again
# (into a scratch file) gives a PNG of the same size.  (Its pixels depend on
# the machine's fonts, so only the size is compared.)
png_size() { od -An -j16 -N8 -tx1 "$1" | tr -d ' \n'; }
grep -n '^<!-- figure: ' "$src/README.md" | while IFS= read -r marker; do
    line=${marker%%:*}
    file=$(printf '%s' "$marker" | sed 's/.*figure: \([^ ]*\) -->.*/\1/')
    cmd=$(tail -n +"$((line + 2))" "$src/README.md" | sed '/^```$/,$d' | sed 's/\\$//' | tr '\n' ' ')
    cmd=$(printf '%s' "$cmd" | sed "s|^ *\./attnscope|\"$bin\"|; s|--figure $file|--figure $tmp/figure.png|")
    echo x >>"$tmp/count"
    if ! (cd "$src" && eval "$cmd") >/dev/null 2>"$tmp/figure.err"; then
        echo "FAIL: README.md:$line: the figure's command fails: $(cat "$tmp/figure.err")"
        echo x >>"$tmp/failed"
    elif [ "$(png_size "$tmp/figure.png")" != "$(png_size "$src/$file")" ]; then
        echo "FAIL: README.md:$line: $file is not the size its command draws (run it again)"
        echo x >>"$tmp/failed"
    fi
done

# Every Debian package configure names when it is missing is in the README's
# install line: a stranger following the quick start has what the build needs.
install_line=$(awk '/<!-- quickstart:run -->/ { want = 1; next } want && /^apt-get/ { print; exit }' "$src/README.md")
for pkg in $(grep -o 'apt-get install [a-z0-9 .+-]*' "$src/configure.ac" | sed 's/apt-get install //' | tr ' ' '\n' | sort -u); do
    echo x >>"$tmp/count"
    case " $install_line " in
    *" $pkg "*) ;;
    *) echo "FAIL: README.md's quick start does not install $pkg, which configure needs"
       echo x >>"$tmp/failed" ;;
    esac
done

# The README's counts of walkthroughs are the shipped ones' (issue 50, item 13):
# "N walkthroughs.  N need no model ... N are on trained models", each word
# against samples/walkthroughs/ (a lesson on a model names --model in its options).
spell() {
    set -- "$1" zero one two three four five six seven eight nine ten eleven twelve \
        thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty twenty-one \
        twenty-two twenty-three twenty-four twenty-five
    n=$1
    shift
    [ "$n" -lt "$#" ] || { echo "$n"; return; }
    shift "$n"
    echo "$1"
}
said() { # the lowercased word before "$1" in the README's lessons section
    awk '/^## Lessons/ { on = 1; next } on && /^## / { exit } on' "$src/README.md" | tr '\n' ' ' |
        grep -o "[A-Za-z-]* $1" | head -1 | cut -d' ' -f1 | tr 'A-Z' 'a-z'
}
all=$(ls "$src"/samples/walkthroughs/*.walk | wc -l)
on_model=$(grep -l '^options:.*--model' "$src"/samples/walkthroughs/*.walk | wc -l)
for pair in "walkthroughs.:$all" "need no model:$((all - on_model))" "are on trained models:$on_model"; do
    echo x >>"$tmp/count"
    words=${pair%%:*}
    want=$(spell "${pair##*:}")
    got=$(said "$words")
    if [ "$got" != "$want" ]; then
        echo "FAIL: README.md says '$got $words' of the lessons; samples/walkthroughs/ has $want"
        echo x >>"$tmp/failed"
    fi
done

# The README's --generate examples on the shipped models write words, not only
# line ends (issue 50, item 10): the text after the prompt holds a letter.
grep -E '^\./attnscope --model samples/.*--generate [0-9]+.*--print' "$src/README.md" |
while IFS= read -r cmd; do
    echo x >>"$tmp/count"
    run=$(printf '%s' "$cmd" | sed "s|^\./attnscope|\"$bin\"|")
    (cd "$src" && eval "$run") >"$tmp/written" 2>/dev/null
    written=$(sed -n '/^text ([0-9]* tokens* of prompt/,/^kv cache/p' "$tmp/written" | sed '1d;$d' |
        tr -d '\n')
    prompt=$(printf '%s' "$cmd" | sed 's/.* -s "\([^"]*\)".*/\1/')
    case "${written#"$prompt"}" in
    *[A-Za-z]*) ;;
    *) echo "FAIL: README.md: '$cmd' writes no word: '${written#"$prompt"}'"
       echo x >>"$tmp/failed" ;;
    esac
done

# Its Tests section names every test program and script: a test added says what it proves.
tests_section=$(sed -n '/^## Tests/,/^## [A-Z]/p' "$src/doc/architecture.md")
for file in $(cd "$src" && find tests -maxdepth 2 \( -name 'check_*.c' -o -name '*.sh' \) | sort); do
    name=$(basename "$file")
    name=${name%.*}
    echo x >>"$tmp/count"
    if ! printf '%s\n' "$tests_section" | grep -q "\b$name\b"; then
        echo "FAIL: doc/architecture.md's Tests section does not name $file"
        echo x >>"$tmp/failed"
    fi
done
# doc/architecture.md names every source file (issue 51, item 6): a file added is placed in the
# map of the code, or this fails.
for file in $(cd "$src" && find src -name '*.c' -o -name '*.h' | grep -v '\.pb-c\.' | sort); do
    name=$(basename "$file")
    name=${name%.*}
    echo x >>"$tmp/count"
    if ! grep -q "\b$name\b" "$src/doc/architecture.md"; then
        echo "FAIL: doc/architecture.md does not name $file"
        echo x >>"$tmp/failed"
    fi
done

# No comment names a function or a source file that does not exist (issue 51, item 6): every
# name() a comment gives is in the code (comments stripped by the compiler's preprocessor), and
# every NAME.c is one of ours (or another project's, named here: llama.cpp's ggml-quants.c,
# llm.c, htop's CRT.c).
sources=$(cd "$src" && find src include -name '*.c' -o -name '*.h' | grep -v '\.pb-c\.' | sort)
for file in $sources; do
    ${CC:-cc} -fpreprocessed -dD -E -P "$src/$file" 2>/dev/null
done >"$tmp/code"
for name in $(cd "$src" && grep -ohE '\b[a-z][a-z0-9]*_[a-z0-9_]+\(\)' $sources | sort -u); do
    name=${name%"()"}
    echo x >>"$tmp/count"
    if ! grep -qw "$name" "$tmp/code"; then
        echo "FAIL: a comment names $name(), which no code defines or calls"
        echo x >>"$tmp/failed"
    fi
done
# History is git log's and doc/performance.md's, not the code's: no source comment tells which
# issue a line came from (issue 51, item 6).
echo x >>"$tmp/count"
if (cd "$src" && grep -nE '[Ii]ssue [0-9]+' $sources) >"$tmp/history"; then
    echo "FAIL: source comments telling history: $(head -3 "$tmp/history")"
    echo x >>"$tmp/failed"
fi
for name in $(cd "$src" && grep -ohE '\b[A-Za-z_][A-Za-z0-9_-]*\.c\b' $sources | sort -u); do
    case "$name" in ggml-quants.c | llm.c | CRT.c) continue ;; esac
    echo x >>"$tmp/count"
    if [ -z "$(cd "$src" && find src tests -name "$name" | head -1)" ]; then
        echo "FAIL: a comment names $name, which is not a file of attnscope's"
        echo x >>"$tmp/failed"
    fi
done

count=0
failures=0
[ -f "$tmp/count" ] && count=$(wc -l <"$tmp/count")
[ -f "$tmp/failed" ] && failures=$(wc -l <"$tmp/failed")
echo "$count checks of the documents against the program and the code, $failures failed"

# Every fixture says how it was made (issue 60, item 12): each folder of tests/fixtures (and of
# its decoders/, formats/ and gpt2/) is named in tests/fixtures/README, and each golden text
# file's first line names what wrote it.
made=0
for d in "$src"/tests/fixtures/*/ "$src"/tests/fixtures/decoders/*/ "$src"/tests/fixtures/formats/*/ \
    "$src"/tests/fixtures/gpt2/*/; do
    n=$(basename "$d")
    grep -qw -- "$n" "$src/tests/fixtures/README" || {
        echo "FAIL: tests/fixtures/README does not say what made ${d#"$src"/}"
        made=1
    }
done
for f in "$src"/tests/golden/*.txt "$src"/tests/golden/render/*.txt "$src"/tests/golden/screens/*.txt; do
    head -n 1 "$f" | grep -qE '^# .*(tests/oracle/|GENERATE=1)' || {
        echo "FAIL: ${f#"$src"/}: its first line does not say what made it"
        made=1
    }
done
[ -f "$src/tests/golden/oracle/README" ] || { echo "FAIL: tests/golden/oracle has no README"; made=1; }

# The tokenizer files installed for a bare model.pth are the ones their README
# says, by the SHA-256 sums it records.
sums=0
grep -E '^    [0-9a-f]{64}  ' "$src/samples/tokenizers/gpt2/README.md" | sed 's/^    //' >"$tmp/sums"
if [ "$(wc -l <"$tmp/sums")" -ne 2 ] ||
    ! (cd "$src/samples/tokenizers/gpt2" && sha256sum -c --quiet "$tmp/sums"); then
    echo "FAIL: samples/tokenizers/gpt2: the files are not the ones README.md's SHA-256 sums name"
    sums=1
fi
[ "$count" -ge 4 ] && [ "$failures" -eq 0 ] && [ "$sums" -eq 0 ] && [ "$made" -eq 0 ]
