#!/bin/sh
# fuzz.sh: replays every saved fuzz input (tests/fuzz/corpus/NAME, the seeds
# and what the fuzzer kept, and tests/fuzz/regressions/NAME, every input that
# once crashed attnscope) through each harness, built without libFuzzer.
# Under --enable-sanitizers this is ASan and UBSan over all of them.

set -u
src="${top_srcdir:-.}/tests/fuzz"
bin="${top_builddir:-.}/tests/fuzz"
failures=0

for name in csv tokenizer walkthrough options keys safetensors bpe modelfiles tfindex torchzip gguf chat; do
    dirs=""
    for d in "$src/corpus/$name" "$src/regressions/$name"; do
        [ -d "$d" ] && dirs="$dirs $d"
    done
    if [ -z "$dirs" ]; then
        echo "FAIL: no saved inputs for the $name harness"
        failures=$((failures + 1))
        continue
    fi
    # shellcheck disable=SC2086
    if ! "$bin/replay-$name" $dirs; then
        echo "FAIL: the $name harness; the inputs tried, last one last:"
        # shellcheck disable=SC2086
        REPLAY_VERBOSE=1 "$bin/replay-$name" $dirs 2>&1 | grep '^replay: ' | tail -n 3
        failures=$((failures + 1))
    fi
done
[ "$failures" -eq 0 ]
