#!/bin/sh
# compare.sh: --compare end to end: every form --model takes works as the
# second model, the difference of every exported stage is the two exports
# subtracted, identical weights in other files differ by nothing, and what
# cannot be compared is refused naming what differs.

name=compare
. "${top_srcdir:-.}/tests/clilib.sh"
# The models that ship, by their folders (a build tree elsewhere, distcheck's, finds no name).
models=$(cd "$src/samples/models" && pwd)

# subtracted DIR: every file of DIR/difference is DIR/compare's minus DIR's, cell by cell,
# to float32's rounding (the difference is made in float32; awk works in double), a cell
# both models mask (-inf) staying -inf; the labels the same.  Prints what is wrong, if anything.
subtracted() {
    (cd "$1/difference" && find . -name '*.csv' | sort) >"$tmp/names"
    [ -s "$tmp/names" ] || { echo "no files in $1/difference"; return; }
    while read -r name; do
        [ -f "$1/$name" ] && [ -f "$1/compare/$name" ] || { echo "$name: not in both exports"; continue; }
        paste -d '\n' "$1/$name" "$1/compare/$name" "$1/difference/$name" | awk -F, -v name="$name" '
            function num(s) { return s + 0 }
            function abs(x) { return x < 0 ? -x : x }
            NR % 3 == 1 { n = split($0, a, ","); next }
            NR % 3 == 2 { split($0, b, ","); next }
            {
                m = split($0, d, ",")
                if (m != n) { print name ": line " (NR / 3) ": " m " cells, " n " in the exports"; exit }
                for (i = 1; i <= m; i++) {
                    if (NR == 3 || i == 1) {
                        if (d[i] != a[i]) { print name ": label " d[i] " is " a[i] " in the export"; exit }
                        continue
                    }
                    if (a[i] ~ /inf|nan/ || b[i] ~ /inf|nan/) {
                        if (!(a[i] == "-inf" && b[i] == "-inf" && d[i] == "-inf")) {
                            print name ": line " (NR / 3) ", cell " i ": " d[i] " of " b[i] " and " a[i]
                            exit
                        }
                        continue
                    }
                    want = num(b[i]) - num(a[i])
                    big = abs(num(a[i])) > abs(num(b[i])) ? abs(num(a[i])) : abs(num(b[i]))
                    if (abs(num(d[i]) - want) > 1.2e-7 * big + 1e-30) {
                        print name ": line " (NR / 3) ", cell " i ": " d[i] ", but " b[i] " - " a[i] " = " want
                        exit
                    }
                    cells++
                }
            }
            END { if (cells == 0 && NR > 3) print name ": no value compared" }'
    done <"$tmp/names"
}

# A shipped model against its 4-bit GGUF: every stage of every layer exported three ways.
count=$((count + 1))
if "$bin" --model "$models/minillama" --compare "$models/minillama-q4" --export "$tmp/q4" 2>"$tmp/err"; then
    grep -qF "attnscope: wrote 201 files into $tmp/q4, $tmp/q4/compare and $tmp/q4/difference" "$tmp/err" ||
        fail "--export with --compare: $(cat "$tmp/err")"
    wrong=$(subtracted "$tmp/q4")
    [ -z "$wrong" ] || fail "the difference is not the exports subtracted: $wrong"
    # Every stage the first's export holds (its layers' and final.csv) has its difference.
    (cd "$tmp/q4" && ls layer*/*.csv final.csv) >"$tmp/stages"
    (cd "$tmp/q4/difference" && ls layer*/*.csv final.csv) >"$tmp/differences"
    cmp -s "$tmp/stages" "$tmp/differences" && [ "$(wc -l <"$tmp/stages")" -eq 65 ] ||
        fail "difference/ lacks stages: $(diff "$tmp/stages" "$tmp/differences")"
    # heads-changed.csv: a row per head of each layer; every change above 0 (4 bits moved every head).
    awk -F, 'NR == 1 { ok = $0 == "layer,head,measure"; next } { rows++; if (!($3 > 0 && $3 < 1)) ok = 0 }
             END { exit !(ok && rows == 8) }' "$tmp/q4/heads-changed.csv" ||
        fail "heads-changed.csv: $(cat "$tmp/q4/heads-changed.csv")"
    awk -F, 'NR == 1 { ok = $0 == "position,token,kl"; next } { rows++; if (!($NF > 0)) ok = 0 }
             END { exit !(ok && rows == 17) }' "$tmp/q4/next-kl.csv" ||
        fail "next-kl.csv: $(cat "$tmp/q4/next-kl.csv")"
    cmp -s "$tmp/q4/tokens.csv" "$tmp/q4/compare/tokens.csv" || fail "the two exports' tokens differ"
else
    fail "--model minillama --compare minillama-q4 --export: $(cat "$tmp/err")"
fi
# A selection: the stages chosen, in each of the three folders, and the changes of the heads.
count=$((count + 1))
"$bin" --model "$models/minillama" --compare "$models/minillama-q4" --export "$tmp/sel" --stage weights.h1 --stage heads \
    --stage final 2>"$tmp/err" &&
    [ -f "$tmp/sel/layer1/weights.h1.csv" ] && [ -f "$tmp/sel/compare/layer1/weights.h1.csv" ] &&
    [ -f "$tmp/sel/difference/layer1/weights.h1.csv" ] && [ -f "$tmp/sel/difference/final.csv" ] &&
    [ -f "$tmp/sel/heads-changed.csv" ] && [ ! -f "$tmp/sel/difference/layer1/weights.h0.csv" ] &&
    [ -z "$(subtracted "$tmp/sel")" ] || fail "--export --stage with --compare: $(cat "$tmp/err"); $(subtracted "$tmp/sel")"

# --print: each stage three ways, the next tokens of both with their divergence, the heads
# ranked, where the lenses part.
count=$((count + 1))
"$bin" --model "$models/minillama" --compare "$models/minillama-q4" --print --stage weights.h1 --stage next --stage heads \
    --stage lens >"$tmp/print" 2>"$tmp/err" &&
    grep -q "^first (minillama), layer 0, weights, head 1 of 4 (17 x 17)" "$tmp/print" &&
    grep -q "^second (minillama-q4), layer 0, weights, head 1 of 4 (17 x 17)" "$tmp/print" &&
    grep -q "^difference (second - first), layer 0, weights, head 1 of 4 (17 x 17)" "$tmp/print" &&
    grep -q "^compared: first minillama, second minillama-q4" "$tmp/print" &&
    grep -q "^next tokens compared: KL(first || second) in nats over all 520 outputs" "$tmp/print" &&
    grep -q "^heads changed: the mean over rows of the Jensen-Shannon divergence (bits)" "$tmp/print" &&
    grep -q "^most changed:  1.0 " "$tmp/print" &&
    grep -q "^logit lens compared: " "$tmp/print" || fail "--print with --compare: $(head -c 3000 "$tmp/print") $(cat "$tmp/err")"
# The printed difference is the export's (the same numbers, --digits 9 against %.9g).
count=$((count + 1))
"$bin" --model "$models/minillama" --compare "$models/minillama-q4" --print --stage weights.h1 --layer 1 --format csv \
    --digits 9 >"$tmp/csv" 2>/dev/null
awk '/^# difference/ { on = 1; next } on && /^$/ { exit } on' "$tmp/csv" >"$tmp/csv.diff"
[ -s "$tmp/csv.diff" ] || fail "--format csv with --compare printed no difference: $(head -20 "$tmp/csv")"

# --generate with --compare: the first writes, the second reads along; the probability it gave
# each written token is its own next-token probability after the same text (its --print of
# that text, run alone), in --print's column and generated.csv's.
count=$((count + 1))
prompt="cat map sun red fox ink owl jam cat"
"$bin" --model "$models/minillama" --compare "$models/minillama-q4" --print --generate 6 -s "$prompt" \
    >"$tmp/gen" 2>"$tmp/err" || fail "--generate with --compare: $(cat "$tmp/err")"
grep -q "p second: the probability minillama-q4 gave the token, reading the same text" "$tmp/gen" ||
    fail "--generate with --compare: no p second: $(head -20 "$tmp/gen")"
text="$prompt"
for step in 1 2 3 4 5 6; do
    count=$((count + 1))
    row=$(awk -v s="$step" '$1 == s && NF == 9 { print }' "$tmp/gen")
    token=$(echo "$row" | awk '{ print $4 }')
    second=$(echo "$row" | awk '{ print $9 }')
    own=$("$bin" --model "$models/minillama-q4" --print --stage next --top 520 -s "$text" 2>/dev/null |
        awk -v t="$token" 'NF > 2 { last = $0 } END { n = split(last, f, " "); for (i = 3; i < n; i += 2) if (f[i] == t) print f[i + 1] }')
    [ -n "$second" ] && [ "$second" = "$own" ] ||
        fail "--generate --compare step $step ($token): p second '$second', minillama-q4 alone '$own'"
    text="$text ${token#·}"
done
count=$((count + 1))
"$bin" --model "$models/minillama" --compare "$models/minillama-q4" --export "$tmp/genx" --generate 3 --stage tokens \
    -s "$prompt" 2>"$tmp/err" &&
    head -1 "$tmp/genx/generated.csv" | grep -qx "step,position,id,token,probability,second_probability" &&
    [ "$(wc -l <"$tmp/genx/generated.csv")" -eq 4 ] && [ -f "$tmp/genx/compare/tokens.csv" ] ||
    fail "--export --generate with --compare: $(cat "$tmp/err") $(cat "$tmp/genx/generated.csv")"

# Every form --model takes, as the second model, each holding the first's weights: the
# difference of identical float32 weights is zero everywhere, whatever the files.
#   qwen3's Hugging Face folder and its GGUF (tests/oracle/gguf_models.py), the GGUF as a
#   folder with the tokenizer.json beside it, the safetensors file, a Hugging Face cache name;
#   a GGUF with its own tokenizer, as a file, an Ollama name and LM Studio's publisher/model;
#   the book's .pth (chapter5, shipped) and a copy of it.
decoders=$(cd "$src/tests/fixtures/decoders" && pwd)
tokgguf="$decoders/qwen3-tok-gguf/model.gguf"
mkdir -p "$tmp/gguf-folder" "$tmp/hub/models--org--same/snapshots/abc" "$tmp/hub/models--org--same/refs" \
    "$tmp/ollama/manifests/registry.ollama.ai/library/same" "$tmp/ollama/blobs" \
    "$tmp/home/.cache/lm-studio/models/pub/same-GGUF" "$tmp/pth"
cp "$decoders/qwen3-gguf/model.gguf" "$decoders/qwen3/tokenizer.json" "$tmp/gguf-folder/"
cp "$decoders/qwen3/"* "$tmp/hub/models--org--same/snapshots/abc/"
printf abc >"$tmp/hub/models--org--same/refs/main"
hex=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
cp "$tokgguf" "$tmp/ollama/blobs/sha256-$hex"
printf '{"schemaVersion":2,"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:%s","size":1}]}' \
    "$hex" >"$tmp/ollama/manifests/registry.ollama.ai/library/same/latest"
cp "$tokgguf" "$tmp/home/.cache/lm-studio/models/pub/same-GGUF/same-Q8_0.gguf"
cp "$src/samples/models/chapter5/model.pth" "$tmp/pth/"
for pair in "$decoders/qwen3|$tmp/gguf-folder" "$tmp/gguf-folder|$decoders/qwen3" \
    "$tmp/gguf-folder|$decoders/qwen3/model.safetensors" "$decoders/qwen3|org/same" \
    "$tokgguf|same" "$tokgguf|pub/same-GGUF" "same|$tokgguf" \
    "$src/samples/models/chapter5|$tmp/pth/model.pth"; do
    first=${pair%%|*}
    second=${pair#*|}
    count=$((count + 1))
    rm -rf "$tmp/same"
    # (the book's .pth says no head count: --heads gives it, to both)
    case $first in *chapter5) set -- --heads 2 ;; *) set -- ;; esac
    if HF_HUB_CACHE="$tmp/hub" OLLAMA_MODELS="$tmp/ollama" HOME="$tmp/home" \
        "$bin" --model "$first" --compare "$second" "$@" -s "the cat sat on the mat" \
        --export "$tmp/same" --stage weights --stage scores --stage mlp --stage final --stage next \
        --stage heads 2>"$tmp/err"; then
        nonzero=$(find "$tmp/same/difference" -name '*.csv' -exec awk -F, 'NR > 1 { for (i = 2; i <= NF; i++) if ($i != 0 && $i != "-inf") { print FILENAME ": " $i; exit } }' {} \; | head -1)
        [ -z "$nonzero" ] || fail "--model $first --compare $second: identical weights differ: $nonzero"
        awk -F, 'NR > 1 && $3 != 0 { bad = 1 } END { exit bad }' "$tmp/same/heads-changed.csv" ||
            fail "--compare $second: a head changed: $(cat "$tmp/same/heads-changed.csv")"
        awk -F, 'NR > 1 && $3 > 1e-6 { bad = 1 } END { exit bad }' "$tmp/same/next-kl.csv" ||
            fail "--compare $second: the next tokens diverge: $(cat "$tmp/same/next-kl.csv")"
        [ -z "$(subtracted "$tmp/same")" ] || fail "--compare $second: $(subtracted "$tmp/same")"
    else
        fail "--model $first --compare $second: $(cat "$tmp/err")"
    fi
done

# --side: one of the three, printed or drawn.
count=$((count + 1))
"$bin" --model "$models/minillama" --compare "$models/minillama-q4" --print --stage weights.h1 --side difference \
    >"$tmp/side" 2>/dev/null
[ "$(grep -c '^difference (second - first), layer 0, weights, head 1' "$tmp/side")" -eq 1 ] &&
    ! grep -q '^first (\|^second (' "$tmp/side" || fail "--side difference: $(head -20 "$tmp/side")"
count=$((count + 1))
"$bin" --model "$models/minillama" --compare "$models/minillama-q4" --figure "$tmp/second.svg" --stage weights \
    --side second 2>"$tmp/err" && grep -q "weights, head 0, second: minillama-q4, " "$tmp/err" ||
    fail "--figure --side second: $(cat "$tmp/err")"
# A figure of two models names them (issue 62, item 5): the difference as SECOND minus FIRST.
expect 0 "wrote $tmp/diff.svg: weights, head 0, minillama-tuned minus minillama, " -- \
    --model "$models/minillama" --compare "$models/minillama-tuned" --stage weights -s "cat map" --figure "$tmp/diff.svg"
expect 0 "wrote $tmp/second.png: weights, head 0, second: minillama-tuned, " -- \
    --model "$models/minillama" --compare "$models/minillama-tuned" --side second --stage weights -s "cat map" --figure "$tmp/second.png"
expect 2 "--side chooses one of two models' numbers: give --compare too" -- --model "$models/minillama" --side first --print
expect 2 "--side: --export writes all three" -- --model "$models/minillama" --compare "$models/minillama-q4" --side first --export "$tmp/no"
expect 2 "--side sideways: choose first, second or difference" -- --model "$models/minillama" --compare "$models/minillama-q4" --side sideways --print

# Refused, naming what differs; never aligned silently.
expect 2 "--compare $models/minigpt: cannot be set beside minillama: key and value heads: 2 in minillama, 4 in minigpt: not the same shapes" \
    -- --model "$models/minillama" --compare "$models/minigpt" --print -s "cat map"
expect 2 "--compare $models/minigemma: cannot be set beside minillama: stage queries_normed: minigemma has it, minillama has not" \
    -- --model "$models/minillama" --compare "$models/minigemma" --print -s "cat map"
# The same shapes, another tokenizer: minillama's files with the ids of " map" and " sun"
# swapped in its vocabulary.
mkdir -p "$tmp/shifted"
cp "$src/samples/models/minillama/config.json" "$src/samples/models/minillama/model.safetensors" "$tmp/shifted/"
sed 's/"Ġmap": *398/"Ġmap": 397_/; s/"Ġsun": *397/"Ġsun": 398/; s/397_/397/' \
    "$src/samples/models/minillama/tokenizer.json" >"$tmp/shifted/tokenizer.json"
expect 2 "token 1 is id 398 '·map' to minillama and id 397 '·map' to shifted: their tokenizers differ" \
    -- --model "$models/minillama" --compare "$tmp/shifted" --print -s "cat map"
expect 1 "--compare /nonexistent: no such file or folder" -- --model "$models/minillama" --compare /nonexistent --print -s cat
expect 2 "--compare is a second trained model beside the first: give --model too" -- --compare "$models/minillama" --print
expect 2 "--compare: the folder name is empty" -- --model "$models/minillama" --compare "" --print

# A folder's name never goes to the terminal raw (issue 60: --print of a comparison wrote both
# names as they are, and a name holding OSC 2 retitled the terminal); the view escapes them too.
odd="$tmp/odd$(printf '\033]2;pwned\007')name"
mkdir -p "$odd"
cp "$src/samples/models/minillama/"* "$odd/"
count=$((count + 1))
{ "$bin" --model "$models/minillama" --compare "$odd" --print -s "cat map" &&
    "$bin" --model "$models/minillama" --compare "$odd" --print --stage weights.h0 -s "cat map" &&
    "$bin" --model "$models/minillama" --compare "$odd" --print --generate 2 -s "cat map" &&
    "$bin" --model "$models/minillama" --compare "$odd" --print --format csv --stage weights.h0 -s "cat map"; } \
    >"$tmp/odd.out" 2>&1 || fail "--compare of an odd name: $(tail -3 "$tmp/odd.out")"
grep -q "$(printf '\033')" "$tmp/odd.out" && fail "--print of a comparison wrote a name's escape as it is"
grep -qF 'second (odd\x1B]2;pwned\x07name)' "$tmp/odd.out" &&
    grep -qF 'compared: first minillama, second odd\x1B]2;pwned\x07name' "$tmp/odd.out" ||
    fail "--print of a comparison: the names escaped: $(grep -a 'compared' "$tmp/odd.out")"
# Writing with an expert switched off beside a second model (issue 60: a double free).
count=$((count + 1))
"$bin" --model "$models/minimoe" --compare "$models/minimoe" --expert-off 0.1 --generate 2 --print \
    -s "cat map sun" >"$tmp/moe-off" 2>&1 && grep -qF "wrote 2 tokens" "$tmp/moe-off" ||
    fail "--compare with --expert-off and --generate: $(tail -3 "$tmp/moe-off")"

echo "$count checks, $failures failed"
[ "$failures" -eq 0 ]
