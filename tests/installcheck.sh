#!/bin/sh
# installcheck.sh BIN PKGDATADIR SRCDIR: the installed program on what was installed
# beside it (make installcheck; make distcheck runs it).  Every model and lesson the source
# tree ships must be installed, every installed model opens by its name, and every installed
# lesson plays from the installed folder: a model or lesson left out of Makefile.am's lists
# passes every other check, which runs from the source tree.
#
# It runs in an empty folder with HOME, the caches and ATTNSCOPE_* pointed at nothing, so
# only the installed files can be found.
set -u
abs() { case $1 in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$(pwd)" "$1" ;; esac; }
bin=$(abs "$1")
data=$(abs "$2")
src=$(abs "$3")
failures=0
count=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attnscope-installcheck-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}
cd "$tmp" || exit 1
run() {
    env -u ATTNSCOPE_MODEL -u ATTNSCOPE_MODELS -u ATTNSCOPE_WALKTHROUGHS -u OLLAMA_MODELS \
        HOME="$tmp/home" HF_HUB_CACHE="$tmp/none" HF_HOME="$tmp/none" XDG_CACHE_HOME="$tmp/none" \
        TIKTOKEN_CACHE_DIR= "$bin" "$@"
}

[ -x "$bin" ] || { echo "FAIL: $bin is not installed"; exit 1; }
# Everything the source tree ships is installed, file for file.
for f in $(cd "$src/samples" && find models walkthroughs tokenizers translate soft-dictionary -type f | sort); do
    count=$((count + 1))
    [ -f "$data/samples/$f" ] || fail "samples/$f ships in the source tree but is not installed"
done
# Each installed model opens by its name, from the installed folder.
for dir in "$data"/samples/models/*/; do
    name=$(basename "$dir")
    count=$((count + 1))
    set -- --model "$name"
    # (the book's model.pth has no config: it is named by its file, its heads given as lesson
    # 13 gives them)
    [ -f "$dir/config.json" ] || [ -f "$dir/model.gguf" ] || set -- --model "${dir%/}/model.pth" --heads 2
    if ! run "$@" --print --stage tokens >"$tmp/out" 2>"$tmp/err"; then
        fail "$*: $(cat "$tmp/err")"
    elif ! cat "$tmp/out" "$tmp/err" | grep -qF "$data/samples/models/$name"; then
        fail "$* was not read from the installed samples: $(head -2 "$tmp/out")"
    fi
done
# Each installed lesson plays from the installed folder (its models found beside it); a
# lesson whose model cannot be installed (GPT-2 small) says so by name.
for walk in "$data"/samples/walkthroughs/*.walk; do
    count=$((count + 1))
    name=$(basename "$walk" .walk)
    if run --walkthrough "$name" --print >"$tmp/out" 2>"$tmp/err"; then
        grep -q "^# \|^[0-9]*\. " "$tmp/out" || fail "--walkthrough $name printed no lesson: $(head -3 "$tmp/out")"
    elif ! grep -q "GPT-2 small is not on this machine\|gpt2 is not on this machine" "$tmp/err"; then
        fail "--walkthrough $name from the installed lessons: $(cat "$tmp/err")"
    fi
done
run --walkthrough 01-no-weights --print >/dev/null 2>&1 || fail "the first lesson does not play"
echo "$count checks of the installed program, $failures failed"
[ "$failures" -eq 0 ]
