#!/bin/sh
# cli.sh: attnscope's command line end to end: the book's answer, exports and
# --weights round trips, and every kind of bad input giving a one-line error
# that names the option or the file, row and column, with the right exit code.

name=cli
. "${top_srcdir:-.}/tests/clilib.sh"

# The book's MultiHeadAttention output, first row.
count=$((count + 1))
"$bin" --print >"$tmp/book" 2>&1 || fail "--print failed"
grep -q "^  Your     0.3190  0.4858$" "$tmp/book" || fail "--print lacks the book's output row 0.3190 0.4858"
grep -q "^output (6 x 2)" "$tmp/book" || fail "--print lacks the output stage"

count=$((count + 1))
"$bin" --print --variant simple --stage weights --digits 6 | grep -q "^  journey  0.138548  0.237891  0.233274  0.123992  0.108182  0.158114$" ||
    fail "--variant simple: the book's weights of 'journey'"

count=$((count + 1))
"$bin" --print -e "$src/samples/hello-shiny-sun.csv" -s "Hello shiny sun!" --variant simple >"$tmp/hss" 2>&1 ||
    fail "hello shiny sun failed"
grep -q "tokens (4): Hello shiny sun !\*" "$tmp/hss" || fail "made-up token not marked in --print"

# Wide (CJK) characters take two columns in --print's tables, so the header
# and the rows line up (each CJK character is 3 bytes but 2 columns).
count=$((count + 1))
cjk=$(printf '\346\227\245\346\234\254\350\252\236')
"$bin" --print -s "$cjk is fun" --stage weights.h0 >"$tmp/wide" 2>&1 || fail "--print of a CJK sentence failed"
# (All three words are made up: each row keeps its '*'.)
grep -qxF "           $cjk      is     fun" "$tmp/wide" && grep -qxF "  $cjk*  1.0000  0.0000  0.0000" "$tmp/wide" &&
    grep -qxF "  is*      0.4951  0.5049  0.0000" "$tmp/wide" || fail "--print misaligns a CJK sentence: $(cat "$tmp/wide")"

# Export, then load the weights back: the same output, to the last digit.
count=$((count + 1))
"$bin" --export "$tmp/run" --variant mha --d-out 4 --heads 2 --qkv-bias --seed 7 2>"$tmp/err" ||
    fail "--export failed: $(cat "$tmp/err")"
grep -q "wrote 27 files into $tmp/run" "$tmp/err" || fail "--export message: $(cat "$tmp/err")"
"$bin" --export "$tmp/again" --variant mha --d-out 4 --heads 2 --qkv-bias --seed 999 --weights "$tmp/run" 2>/dev/null ||
    fail "--weights failed"
cmp -s "$tmp/run/output.csv" "$tmp/again/output.csv" || fail "--weights did not reproduce output.csv"

# A weights folder describes itself (model.csv): no options needed to read it
# back, options that ask for another layout are refused naming both, and a
# vocabulary of another width names the file.
count=$((count + 1))
"$bin" --print --weights "$tmp/run" --stage output >"$tmp/adopted" 2>&1 || fail "--weights without options: $(cat "$tmp/adopted")"
"$bin" --print --weights "$tmp/run" --variant mha --d-out 4 --heads 2 --qkv-bias --stage output >"$tmp/asked" 2>&1
cmp -s "$tmp/adopted" "$tmp/asked" || fail "--weights without options differs from the same with them"
grep -q "^attnscope: mha (MultiHeadAttention)" "$tmp/adopted" || fail "--weights did not take the variant from model.csv"
expect 2 "holds the weights of --variant mha --d-out 4 --heads 2 --qkv-bias (its model.csv); the options ask for --heads 3" -- --print --weights "$tmp/run" --heads 3
expect 2 "the options ask for --variant wrapper" -- --print --weights "$tmp/run" --variant wrapper --heads 2
expect 1 "model.csv: the weights take 3-dimensional embeddings; the vocabulary's have 6" -- --print --weights "$tmp/run" -e "$src/samples/dry-run-6d.csv"
cp -r "$tmp/run" "$tmp/badmodel"
printf 'key,value\nfamily,book\nvariant,mhx\nd_in,3\nd_out,4\nheads,2\nqkv_bias,1\n' >"$tmp/badmodel/model.csv"
expect 1 "badmodel/model.csv: row 3, column 2: 'mhx' is not a variant" -- --print --weights "$tmp/badmodel"
printf 'key,value\nfamily,book\nvariant,mha\n' >"$tmp/badmodel/model.csv"
expect 1 "needs the rows family, variant, d_in, d_out, heads and qkv_bias" -- --print --weights "$tmp/badmodel"
printf 'key\nfamily\n' >"$tmp/badmodel/model.csv"
expect 1 "model.csv: 1 columns; model.csv has two, key and value" -- --print --weights "$tmp/badmodel"
"$bin" --export "$tmp/one-default" 2>/dev/null || fail "--export with the defaults failed"
"$bin" --export "$tmp/one" --stage weights.h1 --stage out_proj.bias 2>/dev/null || fail "--export --stage failed"

# The export message says "1 file", and prints a folder name with a newline or
# an escape sequence escaped, never raw to the terminal.
count=$((count + 1))
"$bin" --export "$tmp/single" --stage output 2>"$tmp/err" && grep -q "wrote 1 file into $tmp/single$" "$tmp/err" ||
    fail "--export of one file: $(cat "$tmp/err")"
odd="$tmp/odd$(printf '\033')[31mname
line"
"$bin" --export "$odd" --stage output 2>"$tmp/err" || fail "--export into an odd folder name failed"
grep -qF 'odd\x1B[31mname\nline' "$tmp/err" && ! grep -q "$(printf '\033')" "$tmp/err" && [ "$(wc -l <"$tmp/err")" -eq 1 ] ||
    fail "--export message not escaped: $(od -c "$tmp/err" | head -3)"
[ "$(ls "$tmp/one" | tr '\n' ' ')" = "out_proj.bias.csv weights.h1.csv " ] || fail "--export --stage wrote: $(ls "$tmp/one")"

# Bad options: exit 2, the option named.
expect 2 "--heads 3 does not divide --d-out 4: mha splits d_out into equal heads (try --d-out 3 or 6, or --heads 1, 2, 4)" -- --print --d-out 4 --heads 3
expect 2 "--heads 2 does not divide the embeddings' 3 dimensions: notes splits d_model = d_in into equal heads (try --heads 1, 3)" -- --print --variant notes --heads 2
expect 2 "--heads 2 does not divide the embeddings' 3 dimensions: nn-mha splits embed_dim = d_in into equal heads (try --heads 1, 3)" -- --print --variant nn-mha --heads 2

# Cross-attention's inputs: each wrong one refused in one line naming the option.
expect 2 "--source: --variant simple has no weights" -- --print --source "Your journey" --variant simple
expect 2 "--mask causal: a causal mask hides a sentence's later tokens from its own" -- --print --source "Your journey" --mask causal
expect 2 "--learned-positional: with --source each sentence would need its own nn.Embedding" -- --print --source "Your journey" --learned-positional
expect 2 "--source-embeddings is the source sentence's vocabulary: give --source or --source-file" -- --print --source-embeddings "$src/samples/book.csv"
expect 2 "--source and --source-file: choose one" -- --print --source x --source-file x
expect 2 "--qkv gives Q, K and V directly, from no sentence: drop --source" -- --print --source x --qkv "$src/samples/soft-dictionary"
expect 2 "--source is for the book's classes" -- --print --source x --model "$src/samples/models/minigpt"
# No -s on a model with an attnscope.json: its own example (minigpt's repeated passage, <|endoftext|>
# first), said on stderr; a broken attnscope.json is refused naming the file, line and column.
expect 0 "no -s: minigpt's own example; it knows 96 three-letter words" -- --print --stage tokens --model "$src/samples/models/minigpt"
grep -q "<|endoftext|>" "$tmp/out" && grep -q "fox" "$tmp/out" || fail "minigpt without -s: not its example: $(head -5 "$tmp/out")"
mkdir "$tmp/hinted" && cp "$src/samples/models/minigpt/"*.json "$src/samples/models/minigpt/merges.txt" "$src/samples/models/minigpt/model.safetensors" "$tmp/hinted/"
printf '{ "example": "cat map",\n  "colour": 1 }\n' >"$tmp/hinted/attnscope.json"
expect 1 "attnscope.json: unknown key \"colour\"" -- --print --model "$tmp/hinted"
printf '{ "example": "cat map",, }\n' >"$tmp/hinted/attnscope.json"
expect 1 "attnscope.json:1:" -- --print --model "$tmp/hinted"
# (what the view would show of it: no control character, issue 48)
printf '{ "example": "cat map", "knows": "words \\u001b[2J" }\n' >"$tmp/hinted/attnscope.json"
expect 1 "attnscope.json: \"knows\" holds a control character at byte 6 (0x1b)" -- --print --model "$tmp/hinted"
# An attnscope.json past config.json's cap is refused before it is read (issue 35: 80 MB took
# 1.6 GB of memory and 5.7 s).
awk 'BEGIN { printf "{ \"example\": \"cat map\", \"knows\": \""; for (i = 0; i < 70000; i++) printf "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"; print "\" }" }' >"$tmp/hinted/attnscope.json"
expect 1 "attnscope.json: 4410038 bytes; attnscope reads at most 4194304 of such a file" -- --print --model "$tmp/hinted"
"$bin" --print --stage tokens -s "cat map" --model "$src/samples/models/minigpt" >"$tmp/out" 2>"$tmp/err" ||
    fail "minigpt with -s: $(cat "$tmp/err")"
grep -q "no -s" "$tmp/err" && fail "minigpt with -s: said it used its example"
expect 1 "has 6-dimensional vectors and the built-in vocabulary's 3: cross-attention compares them" -- --print --source row1 --source-embeddings "$src/samples/dry-run-6d.csv"
awk 'BEGIN { for (i = 0; i < 5000; i++) printf "w "; print "" }' >"$tmp/long-source.txt"
expect 2 "--source: the sentence has more than 4096 tokens, attnscope's limit" -- --print --source-file "$tmp/long-source.txt"
expect 2 "--source: the sentence is empty" -- --print --source ""
expect 1 "cannot open" -- --print --source-file "$tmp/no-such-source.txt"
count=$((count + 1))
"$bin" --print --source "Your journey" -s "with one step" --stage weights >"$tmp/cross" 2>&1 || fail "--source: $(cat "$tmp/cross")"
grep -q "^source (2): Your journey$" "$tmp/cross" && grep -q "^weights, head 0 of 2 (3 x 2)" "$tmp/cross" ||
    fail "--source: no 3 x 2 weights: $(cat "$tmp/cross")"
expect 2 "--dropout 1: p must be at least 0 and below 1" -- --print --dropout 1
expect 2 "--d-out 0: give a number from 1 to 8192" -- --print --d-out 0
expect 2 "--bogus: unknown option" -- --bogus
expect 2 "--seed 99999999999999999999: beyond 64 bits" -- --seed 99999999999999999999
expect 2 "the sentence is empty" -- --print -s "  "
expect 2 "not valid UTF-8" -- --print -s "$(printf 'caf\377')"
expect 2 "--stage weights.h7: head out of range; the heads are 0-1" -- --print --stage weights.h7
expect 2 "--stage weigths: no such stage" -- --print --stage weigths
expect 2 "--temperature 0: T must be above 0" -- --print --temperature 0
expect 2 "the sentence has more than 4096 tokens, attnscope's limit" -- --print -s "$(awk 'BEGIN { for (i = 0; i < 50000; i++) printf "w,"; }')"
expect 2 "this configuration needs 49172 MiB (parameters, inputs and stage buffers); attnscope's limit is 2048 MiB" -- --print --heads 256 --d-out 256 -s "$(awk 'BEGIN { for (i = 0; i < 4096; i++) printf "w "; }')"
expect 2 "--d-out 8193: give a number from 1 to 8192" -- --print --d-out 8193
expect 2 "--d-out 8192 x --heads 256: the wrapper's concatenated width is over 8192" -- --print --variant wrapper --d-out 8192 --heads 256
expect 2 "--heads -1: give a number from 1 to 256" -- --print --heads -1
expect 2 "--d-out needs a value" -- --print --d-out
expect 2 "--temperature -2: T must be above 0" -- --print --temperature -2
expect 2 "--temperature 1e-46: the scores would be divided by 1e-46, which float32 cannot hold" -- --print --temperature 1e-46
expect 2 "--temperature 1e+39: the scores would be divided by 1e+39, which float32 cannot hold" -- --print --temperature 1e39
count=$((count + 1))
"$bin" --print --dropout 0.99999999 --stage output | grep -q "^  dropout 0.99999999, training mode" ||
    fail "--dropout 0.99999999 is not shown as the p in use"
# Every number typed is shown as typed (the shortest text that reads back the same): not "1", not "-0".
count=$((count + 1))
"$bin" --print --dropout 0.9999999999 --temperature 0.1234567 --stage output >"$tmp/shortest"
grep -q "^  dropout 0.9999999999, training mode" "$tmp/shortest" && grep -q "temperature 0.1234567$" "$tmp/shortest" ||
    fail "typed numbers are not shown as typed: $(sed -n 3,4p "$tmp/shortest")"
"$bin" --print --dropout -0 --stage output | grep -q "^  dropout 0, training mode" || fail "--dropout -0 is shown as -0"
expect 2 "--dropout -0.1: p must be at least 0 and below 1" -- --print --dropout -0.1
expect 2 "--dropout: 'nan' is not a finite number" -- --print --dropout nan
# What was typed is quoted escaped: one line, nothing a terminal acts on.
expect 2 "'\\x1B[31mred' is not a variant" -- --variant "$(printf '\033[31mred')"
expect 2 "'two\\nlines': unexpected argument" -- --print "$(printf 'two\nlines')"
expect 2 "the sentence holds a control character (byte 3, U+001B)" -- --print -s "$(printf 'a \033[2J')"

# Bad files: exit 1, file, row and column named.
printf 'token,d0,d1\nsun,1,2\nmoon,3\n' >"$tmp/ragged.csv"
expect 1 "ragged.csv: row 3 has 2 columns, but row 1 has 3" -- --print -e "$tmp/ragged.csv"
printf 'token,d0,d1\nsun,1,2\nmoon,3,x\n' >"$tmp/word.csv"
expect 1 "word.csv: row 3, column 3: 'x' is not a number" -- --print -e "$tmp/word.csv"
printf 'sun,1,inf\n' >"$tmp/inf.csv"
expect 1 "inf.csv: row 1, column 3: 'inf' is not a finite number" -- --print -e "$tmp/inf.csv"
expect 1 "missing.csv: cannot open" -- --print -e "$tmp/missing.csv"
expect 2 "--embeddings: the file name is empty" -- --print -e ""
expect 2 "--weights: the folder name is empty" -- --print --weights ""
expect 2 "--qkv: the folder name is empty" -- --print --qkv ""
expect 2 "--walkthrough: the file name is empty" -- --print --walkthrough ""
expect 2 "--embeddings: the file name is empty" -- --print --embeddings=""
# Options that would be accepted and then ignored are refused.
# A --qkv file without a header row keeps its first row (before: lost as a header).
count=$((count + 1))
mkdir -p "$tmp/nohead" && cp "$src/samples/soft-dictionary/"*.csv "$tmp/nohead/"
tail -n +2 "$src/samples/soft-dictionary/queries.csv" >"$tmp/nohead/queries.csv"
"$bin" --print --qkv "$tmp/nohead" --scale-dim 4 --stage output >"$tmp/nohead.out" 2>&1 &&
    grep -q "^queries (3):" "$tmp/nohead.out" || fail "--qkv without a header row: $(head -8 "$tmp/nohead.out")"
expect 2 "--qkv gives Q, K and V instead of a sentence: drop --sentence" -- --print --qkv "$src/samples/soft-dictionary" -s "a b"
expect 2 "--qkv gives Q, K and V instead of a sentence: drop --positional" -- --print --qkv "$src/samples/soft-dictionary" --positional
expect 2 "--weights: --variant simple has no weights to load" -- --print --variant simple --weights "$tmp"
expect 2 "--walkthrough: each step gives its own inputs; drop --sentence" -- --print --walkthrough 01-no-weights -s "a b"
expect 2 "--walkthrough: each step gives its own inputs; drop --embeddings" -- --print --walkthrough 01-no-weights -e "$src/samples/book.csv"
# COLUMNS as the environment gives it: nonsense or a huge width keeps a sane
# one, and the heatmap is never wider than its table needs (before: a crash
# at 268435457, nothing at 1e9, 6 GB at 1e8).
for cols in 268435457 1e9 100000000 5000 abc; do
    count=$((count + 1))
    COLUMNS=$cols "$bin" --heatmap --stage weights.h0 >"$tmp/hm" 2>"$tmp/err" || fail "COLUMNS=$cols: exit $? ($(cat "$tmp/err"))"
    grep -q "max 1.0000" "$tmp/hm" || fail "COLUMNS=$cols: no heatmap"
    [ "$(LC_ALL=C.UTF-8 wc -L <"$tmp/hm")" -le 120 ] || fail "COLUMNS=$cols: wider than the table needs"
done
expect 1 "W_query.weight.csv: cannot open" -- --print --weights "$tmp"
# Folders without model.csv (exports from before it) are read with the options' layout.
cp -r "$tmp/run" "$tmp/run-old" && rm "$tmp/run-old/model.csv"
cp -r "$tmp/one-default" "$tmp/one-default-old" && rm "$tmp/one-default-old/model.csv"
expect 1 "W_query.weight.csv: 4 x 3 values, but W_query.weight here is 2 x 3" -- --print --weights "$tmp/run-old"
expect 1 "W_query.weight.csv: 2 x 3 values, but W_query.weight here is 2 x 6" -- --print --weights "$tmp/one-default-old" -e "$src/samples/dry-run-6d.csv"
printf 'token,d0\n\001\002\377\376,\033[2J\n' >"$tmp/junk.csv"
expect 1 "junk.csv: row 2, column 2: '\\x1B[2J' is not a number" -- --print -e "$tmp/junk.csv"
expect 1 "/dev/null: the file is empty" -- --print -e /dev/null
expect 1 "is a folder, not a file" -- --print -e "$tmp"
if [ -r /proc/self/mem ]; then
    # Unreadable (as root, permissions do not stop a read; this file's first page does).
    expect 1 "/proc/self/mem: cannot read: Input/output error" -- --print -e /proc/self/mem
fi
# The documented limits: refused before anything is allocated for them.
truncate -s 300M "$tmp/sparse.csv"
expect 1 "sparse.csv: 314572800 bytes is more than attnscope reads (268435456 bytes)" -- --print -e "$tmp/sparse.csv"
awk 'BEGIN { printf "token"; for (i = 0; i < 65537; i++) printf ",1"; print "" }' >"$tmp/wide.csv"
expect 1 "wide.csv: row 1: more than 65536 columns, attnscope's limit" -- --print -e "$tmp/wide.csv"
awk 'BEGIN { for (i = 0; i <= 1000000; i++) print "a,1" }' >"$tmp/long.csv"
expect 1 "long.csv: more than 1000000 rows, attnscope's limit" -- --print -e "$tmp/long.csv"
awk 'BEGIN { printf "token"; for (i = 0; i < 8193; i++) printf ",1"; print ""; printf "sun"; for (i = 0; i < 8193; i++) printf ",1"; print "" }' >"$tmp/deep.csv"
expect 1 "deep.csv: 8193 dimensions; attnscope's limit is 8192" -- --print -e "$tmp/deep.csv"
# 763 rows of 65,536 ones: 100 MB, and the 50,000,001st cell is on row 763.
yes "$(awk 'BEGIN { printf "1"; for (i = 1; i < 65536; i++) printf ",1" }')" | head -n 763 >"$tmp/many.csv"
expect 1 "many.csv: row 763: more than 50000000 cells, attnscope's limit" -- --print -e "$tmp/many.csv"
rm -f "$tmp/sparse.csv" "$tmp/wide.csv" "$tmp/long.csv" "$tmp/deep.csv" "$tmp/many.csv"
# The message lists the lessons there are (issue 13, item 22); a build
# outside the source tree (distcheck) finds them through the variable.
export ATTNSCOPE_WALKTHROUGHS="$src/samples/walkthroughs"
expect 1 "--walkthrough no-such-lesson: no such file, and no lesson of that name; the lessons are 01-no-weights, 02-trainable-weights" -- --walkthrough no-such-lesson --print
unset ATTNSCOPE_WALKTHROUGHS

# Every instruction set computes the same bits (a CPU without one falls back to the next).
count=$((count + 1))
sentence="Your journey starts with one step and then another one starts with your step"
for isa in portable avx2 avx512; do
    ATTNSCOPE_ISA=$isa "$bin" --export "$tmp/isa-$isa" --d-out 48 --heads 4 --qkv-bias \
        --dropout 0.2 --temperature 0.7 -s "$sentence" 2>/dev/null || fail "ATTNSCOPE_ISA=$isa --export"
done
diff -r "$tmp/isa-portable" "$tmp/isa-avx2" >/dev/null && diff -r "$tmp/isa-portable" "$tmp/isa-avx512" >/dev/null ||
    fail "the portable, AVX2 and AVX-512 kernels computed different bits"

# Tables for slides: Markdown, LaTeX, CSV; heatmaps as text.
count=$((count + 1))
"$bin" --print --format markdown --stage output | grep -qF "| Your | 0.3190 | 0.4858 |" ||
    fail "--format markdown: the output row"
"$bin" --print --format latex --stage masked.h0 | grep -qF 'Your & 0.2029 & $-\infty$ &' ||
    fail "--format latex: -inf as \$-\\infty\$"
"$bin" --print --format latex --stage context | grep -qF 'Your & $-$0.4519 & 0.2216' ||
    fail "--format latex: a negative number"
"$bin" --format csv --stage context | grep -qx "Your,-0.4519,0.2216" || fail "--format csv: the context row"
"$bin" --heatmap --stage weights.h0 >"$tmp/heat" || fail "--heatmap failed"
grep -q "Your .* 1.0000" "$tmp/heat" && ! grep -q "$(printf '\033')" "$tmp/heat" ||
    fail "--heatmap into a pipe: plain text expected"
LANG=C.UTF-8 "$bin" --heatmap --stage weights.h0 | grep -q "$(printf '\342\226\210') 1.0000" ||
    fail "--heatmap in UTF-8: a full block before the weight 1.0000"
expect 2 "--format: 'pdf' is not a format" -- --print --format pdf
expect 2 "--heatmap works with --print, not --export" -- --export "$tmp/x" --heatmap

# Q, K and V given directly.
count=$((count + 1))
"$bin" --print --qkv "$src/samples/soft-dictionary" --scale-dim 4 --stage output --digits 1 |
    grep -q "^  q2  550.0    5.5    0.0$" || fail "--qkv: the soft dictionary's second output"
mkdir -p "$tmp/qkv"
cp "$src/samples/soft-dictionary/"*.csv "$tmp/qkv/"
printf ',d0,d1\nk1,1,0\nk2,1,1\nk3,0,0\nk4,2,2\n' >"$tmp/qkv/values.csv"
expect 1 "values.csv has 2 value columns but keys.csv has 3" -- --print --qkv "$tmp/qkv"
expect 2 "--qkv gives Q, K and V directly: it works with --variant simple only" -- --print --qkv "$tmp/qkv" --variant mha
# Too many value columns is the file's fault: exit 1 naming it (before: exit 2, no file).
mkdir -p "$tmp/wideqkv"
awk 'BEGIN { for (r = 0; r < 3; r++) { printf "t%d", r; for (c = 0; c < 8193; c++) printf ",0.5"; print "" } }' >"$tmp/wideqkv/queries.csv"
cp "$tmp/wideqkv/queries.csv" "$tmp/wideqkv/keys.csv"
cp "$tmp/wideqkv/queries.csv" "$tmp/wideqkv/values.csv"
expect 1 "wideqkv/queries.csv: 8193 value columns; attnscope's limit is 8192" -- --print --qkv "$tmp/wideqkv"
expect 1 "queries.csv: cannot open" -- --print --qkv "$tmp/nothing-here"
mkdir -p "$tmp/qkv-label"
cp "$src/samples/soft-dictionary/"*.csv "$tmp/qkv-label/"
printf ',d0,d1,d2\n"q\033[2J",1,2,3\n' >"$tmp/qkv-label/queries.csv"
expect 1 "queries.csv: row 2, column 1: a label must be one line of UTF-8 text" -- --print --qkv "$tmp/qkv-label"

# An export that cannot be written leaves no files behind.
: >"$tmp/plainfile"
expect 1 "plainfile: exists and is not a folder" -- --export "$tmp/plainfile"
mkdir -p "$tmp/blocked/output.csv"
expect 1 "output.csv: is a folder; nothing was written" -- --export "$tmp/blocked"
[ "$(ls -A "$tmp/blocked")" = "output.csv" ] || fail "a failed export left files: $(ls -A "$tmp/blocked")"

# A full disk (a file size limit here): the export fails, says nothing was
# written, and the files of an earlier export stay as they were.
big_sentence=$(i=0; while [ $i -lt 300 ]; do printf 'w%d ' $i; i=$((i + 1)); done)
mkdir -p "$tmp/full"
echo "an earlier export" >"$tmp/full/output.csv"
count=$((count + 1))
(ulimit -f 16; "$bin" --export "$tmp/full" --d-out 64 --heads 4 -s "$big_sentence") 2>"$tmp/err"
got=$?
[ "$got" -eq 1 ] || fail "export past the file size limit: exit $got"
grep -q "cannot write: File too large; nothing was written" "$tmp/err" ||
    fail "export past the file size limit: $(cat "$tmp/err")"
[ "$(ls -A "$tmp/full")" = "output.csv" ] && [ "$(cat "$tmp/full/output.csv")" = "an earlier export" ] ||
    fail "a failed export touched the folder: $(ls -A "$tmp/full")"
(ulimit -f 16; "$bin" --export "$tmp/new-folder" --d-out 64 --heads 4 -s "$big_sentence") 2>/dev/null
[ ! -e "$tmp/new-folder" ] || fail "a failed export left the folder it made: $(ls -A "$tmp/new-folder")"

# Interrupted while writing: no hidden temporary file is left behind.
count=$((count + 1))
"$bin" --export "$tmp/stopped" --d-out 512 --heads 8 -s "$big_sentence $big_sentence $big_sentence" 2>/dev/null &
pid=$!
tries=0
# It writes into a hidden staging folder beside the folder first: wait for its first file.
while [ -z "$(ls -A "$tmp"/.stopped.attnscope-* 2>/dev/null)" ] && [ $tries -lt 500 ]; do
    sleep 0.01
    tries=$((tries + 1))
done
kill -INT $pid 2>/dev/null
wait $pid
got=$?
if [ $tries -ge 500 ]; then
    fail "the interrupted export never started writing"
elif [ "$got" -ne 130 ]; then
    fail "an interrupted export: exit $got, expected 130 (SIGINT)"
elif [ -e "$tmp/stopped" ] || ls -d "$tmp"/.stopped.attnscope-* >/dev/null 2>&1; then
    fail "an interrupted export left: $(ls -A "$tmp" | grep stopped)"
fi

# Killed (SIGKILL, which nothing can catch) at any moment of an export over
# an earlier one: the folder holds the earlier export or the new one, whole,
# never a mix (before: 190 new files beside 1,100 old), and the next export
# removes what the killed ones left.  The moments vary; any of them must do.
count=$((count + 1))
"$bin" --export "$tmp/ref1" --d-out 128 --heads 64 --seed 1 2>/dev/null
"$bin" --export "$tmp/ref2" --d-out 128 --heads 64 --seed 2 2>/dev/null
cp -r "$tmp/ref1" "$tmp/atomic"
echo "mine" >"$tmp/atomic/notes.txt"
k=0
while [ $k -lt 12 ]; do
    "$bin" --export "$tmp/atomic" --d-out 128 --heads 64 --seed $((k % 2 + 1)) 2>/dev/null &
    pid=$!
    sleep "0.0$k"
    kill -KILL $pid 2>/dev/null
    wait $pid 2>/dev/null
    if ! diff -q -x notes.txt "$tmp/ref1" "$tmp/atomic" >/dev/null && ! diff -q -x notes.txt "$tmp/ref2" "$tmp/atomic" >/dev/null; then
        fail "killed export $k left a mix: $(diff -q -x notes.txt "$tmp/ref1" "$tmp/atomic" | wc -l) files differ from the first export, $(diff -q -x notes.txt "$tmp/ref2" "$tmp/atomic" | wc -l) from the second"
        break
    fi
    [ "$(cat "$tmp/atomic/notes.txt")" = mine ] || { fail "killed export $k lost notes.txt"; break; }
    k=$((k + 1))
done
"$bin" --export "$tmp/atomic" --d-out 128 --heads 64 --seed 2 2>/dev/null || fail "an export after killed ones failed"
diff -q -x notes.txt "$tmp/ref2" "$tmp/atomic" >/dev/null || fail "an export after killed ones differs from the reference"
leftovers=$(ls -A "$tmp" | grep -c '^\.atomic\.attnscope-')
[ "$leftovers" -eq 0 ] || fail "killed exports left $leftovers staging folders beside the folder"
[ -z "$(ls -A "$tmp/atomic" | grep '^\.')" ] || fail "killed exports left hidden files: $(ls -A "$tmp/atomic" | grep '^\.')"

# An immutable file where the export writes (when chattr works here: root on
# ext4 or the like): refused before anything moves, the folder as it was.
mkdir -p "$tmp/immutable"
echo "old" >"$tmp/immutable/output.csv"
echo "old" >"$tmp/immutable/tokens.csv"
if chattr +i "$tmp/immutable/output.csv" 2>/dev/null; then
    expect 1 "immutable/output.csv: cannot be replaced (immutable or append-only); nothing was written" -- --export "$tmp/immutable"
    chattr -i "$tmp/immutable/output.csv"
    [ "$(ls -A "$tmp/immutable" | tr '\n' ' ')" = "output.csv tokens.csv " ] && [ "$(cat "$tmp/immutable/tokens.csv")" = old ] ||
        fail "an export refused for an immutable file changed the folder: $(ls -A "$tmp/immutable")"
fi

# An endless file is refused at the limit, holding no more than the limit
# (before: 514 MB to refuse /dev/zero at 256 MiB).  Not under the
# sanitizers, which reserve terabytes of address space.
if ! grep -q __asan_init "$bin"; then
    count=$((count + 1))
    (ulimit -v 400000; "$bin" --print -e /dev/zero) >/dev/null 2>"$tmp/err"
    grep -q "/dev/zero: longer than attnscope reads (268435456 bytes)" "$tmp/err" ||
        fail "/dev/zero in 400 MB of address space: $(cat "$tmp/err")"
fi

# A handout in Markdown: the lesson and its steps are headings, not a
# numbered list ("1. Title" over a rule) (issue 13, item 18).
count=$((count + 1))
"$bin" --walkthrough "$src/samples/walkthroughs/01-no-weights.walk" --print --format markdown >"$tmp/handout.md" 2>&1
head -1 "$tmp/handout.md" | grep -qxF "# 1. Attention without trainable weights" &&
    grep -qx "## Step 1 of 4: .*" "$tmp/handout.md" || fail "a Markdown handout's headings: $(head -3 "$tmp/handout.md")"

# A handout prints what each step shows (issue 27, item 20): a model's wide
# matrices as the rows and columns around the step's cell, said so; the
# sentence view as the query's weights on each key it sees, the largest marked.
count=$((count + 1))
"$bin" --walkthrough "$src/samples/walkthroughs/08-minigpt-heads.walk" --print >"$tmp/handout.txt" 2>&1 &&
    grep -qx "inputs: rows 0-16 and columns 0-9 of 17 x 64" "$tmp/handout.txt" &&
    grep -qx "What '·sun#11' attends to: head 0 of 4" "$tmp/handout.txt" &&
    grep -qx "  ·map#10        0.9925  <" "$tmp/handout.txt" &&
    [ "$(wc -c <"$tmp/handout.txt")" -lt 20000 ] ||
    fail "lesson 08's handout prints what its steps show: $(head -c 3000 "$tmp/handout.txt")"

# A lesson's own model given again is no fault (issue 62, item 6): by its name or its folder,
# the same handout; another model, or a lesson on the book's classes, is refused naming both.
# (A build outside the source tree, distcheck's, finds lessons and models by name through the variables.)
export ATTNSCOPE_WALKTHROUGHS="$src/samples/walkthroughs" ATTNSCOPE_MODELS="$src/samples/models"
count=$((count + 1))
"$bin" --model minigpt --walkthrough 08-minigpt-heads --print >"$tmp/handout2.txt" 2>&1 &&
    cmp -s "$tmp/handout.txt" "$tmp/handout2.txt" ||
    fail "--model minigpt --walkthrough 08-minigpt-heads: $(head -c 600 "$tmp/handout2.txt")"
count=$((count + 1))
"$bin" --model "$src/samples/models/minigpt" --walkthrough "$src/samples/walkthroughs/08-minigpt-heads.walk" \
    --print >"$tmp/handout2.txt" 2>&1 && cmp -s "$tmp/handout.txt" "$tmp/handout2.txt" ||
    fail "--model (its folder) --walkthrough 08: $(head -c 600 "$tmp/handout2.txt")"
expect 2 "--walkthrough 08-minigpt-heads opens its own model, minigpt; --model minillama is another: drop --model, or give the lesson's" -- \
    --model minillama --walkthrough 08-minigpt-heads --print
expect 2 "--walkthrough 01-no-weights is a lesson on the book's classes; drop --model minigpt" -- \
    --model minigpt --walkthrough 01-no-weights --print
expect 1 "--model nowhere-model" -- --model nowhere-model --walkthrough 08-minigpt-heads --print
unset ATTNSCOPE_WALKTHROUGHS ATTNSCOPE_MODELS

# A handout reads right on paper: no keys to press, no cursor or panel to look
# at; a step that shows every head on screen prints every head (item 18).
for lesson in "$src"/samples/walkthroughs/*.walk; do
    count=$((count + 1))
    if ! "$bin" --walkthrough "$lesson" --print >"$tmp/handout.txt" 2>&1; then
        # A lesson for a model users download (GPT-2 small) says plainly that it is not here.
        if grep -q "^attnscope: .*$(basename "$lesson"):[0-9]*: model gpt2 is not on this machine" "$tmp/handout.txt"; then
            echo "skipped $(basename "$lesson"): GPT-2 small is not on this machine"
            continue
        fi
        fail "$lesson: the handout: $(cat "$tmp/handout.txt")"
    fi
    if grep -n -i -E "press |the panel|cursor|try e |\(press|[{}]" "$tmp/handout.txt" >"$tmp/said"; then
        fail "$(basename "$lesson")'s handout speaks of the screen: $(cat "$tmp/said")"
    fi
done
count=$((count + 1))
"$bin" --walkthrough "$src/samples/walkthroughs/04-multi-head.walk" --print >"$tmp/handout.txt"
sed -n '/^Step 2 of 5/,/^Step 3 of 5/p' "$tmp/handout.txt" >"$tmp/step"
grep -q "^weights, head 0 of 2" "$tmp/step" && grep -q "^weights, head 1 of 2" "$tmp/step" ||
    fail "lesson 4 step 2 quotes both heads and must print both: $(cat "$tmp/step")"

# The README shows real output: it must stay what attnscope prints.
count=$((count + 1))
cmd='./attnscope --print --stage weights.h0 --stage output'
awk -v cmd="\$ $cmd" '$0 == cmd { on = 1; next } on && /^```/ { exit } on { print }' "$src/README.md" >"$tmp/readme"
"$bin" --print --stage weights.h0 --stage output | sed '$ { /^$/d; }' >"$tmp/actual"
[ -s "$tmp/readme" ] || fail "README.md lacks the sample output of '$cmd'"
cmp -s "$tmp/readme" "$tmp/actual" || fail "README.md's sample output differs from '$cmd': $(diff "$tmp/readme" "$tmp/actual")"

# Standard output that cannot be written (a full disk): said, and exit 1.
for args in "--print" "--help" "--version" "--print --walkthrough $src/samples/walkthroughs/01-no-weights.walk"; do
    count=$((count + 1))
    # shellcheck disable=SC2086
    "$bin" $args >/dev/full 2>"$tmp/err"
    got=$?
    [ "$got" -eq 1 ] && grep -q "cannot write to standard output" "$tmp/err" ||
        fail "attnscope $args >/dev/full: exit $got, $(cat "$tmp/err")"
done

# A trained model (--model): the tiny GPT-2 of tests/fixtures/gpt2/tiny, whose
# numbers check_model compares with PyTorch's; here the command line around it.
tiny="$src/tests/fixtures/gpt2/tiny"
say="The cat sat on the mat, and the dog sat on the log."
count=$((count + 1))
"$bin" --model "$tiny" --print -s "$say" >"$tmp/model" 2>&1 || fail "--model --print failed: $(cat "$tmp/model")"
grep -q "^attnscope: tiny (GPT-2 from .*: 2 layers, 2 heads of 8, n_embd 16, vocabulary 317, context 24)$" "$tmp/model" &&
    grep -q "^tokens (18; a space shows as " "$tmp/model" &&
    grep -q "^         1     267  $(printf '\302\267')cat$" "$tmp/model" &&
    grep -q "^layer 0, weights, head 1 of 2 (18 x 18)" "$tmp/model" &&
    grep -q "^next tokens (the 5 likeliest after each position" "$tmp/model" ||
    fail "--model --print lacks the model, the tokens with ids, the weights or the next tokens: $(head -20 "$tmp/model")"
count=$((count + 1))
"$bin" --model "$tiny" --print -s "$say" --layer 1 --stage ln2 --stage next --top 2 >"$tmp/model" 2>&1 &&
    grep -q "^layer 1, ln2 (18 x 16)" "$tmp/model" && ! grep -q "^tokens" "$tmp/model" &&
    [ "$(grep -c '^ *[0-9]*  [^ ]* *[^ ]* [0-9.]*  [^ ]* [0-9.]*$' "$tmp/model")" -eq 18 ] ||
    fail "--layer 1 --stage ln2 --stage next --top 2: $(cat "$tmp/model")"
# The sentence from a file and from standard input, one final newline dropped.
count=$((count + 1))
printf '%s\n' "$say" >"$tmp/say.txt"
"$bin" --model "$tiny" --print -f "$tmp/say.txt" --stage tokens >"$tmp/a" 2>&1 &&
    printf '%s\n' "$say" | "$bin" --model "$tiny" --print -f - --stage tokens >"$tmp/b" 2>&1 &&
    "$bin" --model "$tiny" --print -s "$say" --stage tokens >"$tmp/c" 2>&1 &&
    cmp -s "$tmp/a" "$tmp/c" && cmp -s "$tmp/b" "$tmp/c" || fail "-f FILE and -f - read the sentence -s gives"
# --bos puts <|endoftext|> first; --mask none and --threads change what they say.
count=$((count + 1))
"$bin" --model "$tiny" --print -s "$say" --bos --stage tokens | grep -q "^         0     316  <|endoftext|>$" ||
    fail "--bos: <|endoftext|> (id 316) first"
count=$((count + 1))
"$bin" --model "$tiny" --print -s "$say" --mask none --temperature 2 --stage weights.h0 --threads 1 >"$tmp/a" &&
    grep -q "mask none, scores / 5.65685 (sqrt(d_k) = sqrt(8) \* T), temperature 2" "$tmp/a" ||
    fail "--mask none --temperature 2 on a model: $(head -3 "$tmp/a")"
# Every layer exported; the model from $ATTNSCOPE_MODEL; none for the book's classes.
count=$((count + 1))
ATTNSCOPE_MODEL="$tiny" "$bin" --export "$tmp/mx" -s "$say" 2>"$tmp/err" &&
    grep -q "wrote 47 files into" "$tmp/err" && [ -f "$tmp/mx/layer1/weights.h1.csv" ] &&
    [ "$(head -1 "$tmp/mx/next.csv")" = "position,rank,id,token,probability" ] &&
    [ "$(wc -l <"$tmp/mx/next.csv")" -eq $((1 + 18 * 5)) ] || fail "--export of a model: $(cat "$tmp/err")"
count=$((count + 1))
ATTNSCOPE_MODEL="$tiny" "$bin" --model none --print >"$tmp/a" 2>&1 && grep -q "^  Your     0.3190  0.4858$" "$tmp/a" ||
    fail "--model none: the book's classes even with ATTNSCOPE_MODEL"
# --heads gives a model the head count no file gives; where config.json gives one, it must agree.
expect 2 "--heads 3: $tiny/config.json says the model has 2 heads" -- --model "$tiny" --print --heads 3
expect 2 "--qkv-bias does not apply to a trained model" -- --model "$tiny" --print --qkv-bias
count=$((count + 1))
ATTNSCOPE_MODEL="$tiny" "$bin" --print --dropout 0.1 >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -qF -- "--dropout does not apply to a trained model" "$tmp/err" &&
    grep -qF "(\$ATTNSCOPE_MODEL names a model: --model none for the book's classes)" "$tmp/err" ||
    fail "a toy knob with \$ATTNSCOPE_MODEL set: $(cat "$tmp/err")"
# The seed is a model's writing's: without --generate, --print says so, and why the model is there.
count=$((count + 1))
ATTNSCOPE_MODEL="$tiny" "$bin" --print --seed 3 >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -qF -- "--seed chooses what a model writes: give --generate N" "$tmp/err" &&
    grep -qF "(\$ATTNSCOPE_MODEL names a model: --model none for the book's classes)" "$tmp/err" ||
    fail "--seed with \$ATTNSCOPE_MODEL set: $(cat "$tmp/err")"
# A model named by the environment that is not there is blamed on the environment, not on --model.
count=$((count + 1))
ATTNSCOPE_MODEL=/nonexistent "$bin" --print >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -qF "attnscope: \$ATTNSCOPE_MODEL=/nonexistent: no such file or folder" "$tmp/err" ||
    fail "ATTNSCOPE_MODEL=/nonexistent: $(cat "$tmp/err")"
expect 2 "--embeddings is for the book's classes; a trained model brings its own vocabulary and weights" -- --model "$tiny" --print -e x.csv
expect 2 "--layer works with --model" -- --print --layer 1
expect 2 "--bos works with --model" -- --print --bos
expect 2 "--layer 2: tiny has layers 0 to 1" -- --model "$tiny" --print --layer 2 -s "$say"
expect 2 "the text is more than 24 tokens; tiny reads at most 24 (n_positions in config.json): shorten it" -- --model "$tiny" --print -s "$(awk 'BEGIN { for (i = 0; i < 30; i++) printf " cat"; }')"
expect 2 "--stage dropped: no such stage here" -- --model "$tiny" --print --stage dropped -s "$say"
expect 2 "--sentence and --sentence-file: choose one" -- --print -s hi -f "$tmp/say.txt"
expect 1 "nowhere.txt: cannot open" -- --model "$tiny" --print -f "$tmp/nowhere.txt"
# (With no copy of GPT-2's tokenizer anywhere to borrow.)
shipped_tokenizers=${ATTNSCOPE_TOKENIZERS-}
ATTNSCOPE_TOKENIZERS=$tmp TIKTOKEN_CACHE_DIR='' HF_HUB_CACHE=$tmp
export ATTNSCOPE_TOKENIZERS TIKTOKEN_CACHE_DIR HF_HUB_CACHE
expect 1 "no tokenizer: attnscope reads vocab.json and merges.txt" -- --model "$src/tests/fixtures/gpt2/hf-f32" --print
unset ATTNSCOPE_TOKENIZERS TIKTOKEN_CACHE_DIR HF_HUB_CACHE
[ -z "$shipped_tokenizers" ] || export ATTNSCOPE_TOKENIZERS="$shipped_tokenizers"
expect 1 "--model no-such-model: no such folder, and no download of it in the Hugging Face cache" -- --model no-such-model --print
expect 1 "download it first (for example \`huggingface-cli download Qwen/Qwen3-0.6B\`)" -- --model Qwen/Qwen3-0.6B --print

# The files the book's readers have (tests/fixtures/formats: tests/oracle/format_fixtures.py).
formats=$(cd "$src/tests/fixtures/formats" && pwd)
expect 1 "model.pth: refuses to load __main__.GPTModel: not a state dict" -- --model "$formats/whole-module/model.pth" --print
count=$((count + 1))
bin_abs=$(cd "$(dirname "$bin")" && pwd)/attnscope
(cd "$tmp" && "$bin_abs" --model "$formats/os-system/model.pth" --print >/dev/null 2>"$tmp/err")
[ $? -eq 1 ] && grep -qF "refuses to load posix.system" "$tmp/err" && [ ! -e "$tmp/attnscope-was-here" ] ||
    fail "a pickle that runs a command: $(cat "$tmp/err")"
expect 2 "model.pth: how many heads the model has is in no file beside it" -- --model "$formats/book/model.pth" --print
expect 2 "--heads 3: $formats/openai/hparams.json says the model has 2 heads" -- --model "$formats/openai" --print --heads 3
# Chapter 6's classifier, with a tokenizer of its 64 tokens beside it: classes, not next tokens.
mkdir -p "$tmp/clf"
cp "$formats/classifier-cli/"* "$tmp/clf/"
count=$((count + 1))
"$bin" --model "$tmp/clf/review_classifier.pth" --heads 2 --classes spam,ham --print -s "ABC" --stage next >"$tmp/a" 2>"$tmp/err" &&
    grep -q "a classifier)$" "$tmp/a" && grep -q "^  weights: .*review_classifier.pth (PyTorch state dict); sizes: the tensors' shapes, 2 heads (--heads); a classifier of 2 classes" "$tmp/a" &&
    grep -q "^classes (the classifier head's 2 classes" "$tmp/a" && grep -Eq "^ +1  C +(spam|ham) [0-9.]+  (spam|ham) [0-9.]+$" "$tmp/a" ||
    fail "a classifier's --print: $(cat "$tmp/a" "$tmp/err")"
count=$((count + 1))
"$bin" --model "$tmp/clf/review_classifier.pth" --heads 2 --export "$tmp/clfx" -s "ABC" 2>"$tmp/err" &&
    [ "$(head -1 "$tmp/clfx/next.csv")" = "position,rank,id,class,probability" ] &&
    [ "$(wc -l <"$tmp/clfx/next.csv")" -eq $((1 + 2 * 2)) ] && grep -q ",class 1," "$tmp/clfx/next.csv" ||
    fail "a classifier's --export: $(cat "$tmp/err") $(cat "$tmp/clfx/next.csv")"
expect 2 "--classes names 3 classes; review_classifier.pth's head has 2" -- --model "$tmp/clf/review_classifier.pth" --heads 2 --classes a,b,c --print
expect 2 "--classes: lm.pth is not a classifier: its head scores the vocabulary's next tokens" -- --model "$tmp/clf/lm.pth" --heads 2 --classes a,b --print
expect 2 "--threads 65: give a number from 1 to 64" -- --model "$tiny" --print --threads 65
expect 2 "--ablate 2.0: tiny has layers 0 to 1 and heads 0 to 1" -- --model "$tiny" --print --ablate 2.0 -s "$say"
expect 2 "--ablate x: give a layer and a head, from 0" -- --model "$tiny" --print --ablate x
expect 2 "--ablate works with --model" -- --print --ablate 1.1
count=$((count + 1))
"$bin" --model "$tiny" --print -s "$say" --stage heads >"$tmp/a" &&
    [ "$(grep -c '^heads: ' "$tmp/a")" -eq 5 ] && grep -q "^heads: induction, weight on what followed the token before (layers x heads)$" "$tmp/a" &&
    grep -q "^  layer 1  " "$tmp/a" || fail "--stage heads: the model map's five measures: $(cat "$tmp/a")"
# A folder's name reaches the terminal escaped (issue 23, item 16): an escape in it is \x1B, never the byte.
esc_dir="$tmp/$(printf 'red\033[31mname')"
mkdir -p "$esc_dir" && cp "$tiny"/config.json "$tiny"/model.safetensors "$tiny"/vocab.json "$tiny"/merges.txt "$esc_dir"/
"$bin" --model "$esc_dir" --print -s "$say" >"$tmp/esc.out" 2>&1
if grep -q "$(printf '\033')" "$tmp/esc.out" || ! grep -q 'red\\x1B\[31mname' "$tmp/esc.out"; then
    fail "--print writes a model folder's name raw: $(head -1 "$tmp/esc.out" | od -c | head -3)"
fi

# --export --stage heads / lens: the model map as heads.csv (a row per layer and head), the logit lens as lens.csv.
"$bin" --model "$tiny" --export "$tmp/heads" --stage heads --stage lens -s "$say" >/dev/null 2>&1 &&
    [ "$(head -1 "$tmp/heads/heads.csv")" = "layer,head,entropy,previous,first,self,induction" ] &&
    [ "$(wc -l <"$tmp/heads/heads.csv")" -eq 5 ] &&
    [ "$(head -1 "$tmp/heads/lens.csv")" = "position,layer,rank,id,token,probability" ] &&
    [ "$(wc -l <"$tmp/heads/lens.csv")" -eq 11 ] ||
    fail "--export --stage heads --stage lens: $(ls "$tmp/heads" 2>&1; head -3 "$tmp/heads/heads.csv" 2>&1)"
count=$((count + 1))
"$bin" --model "$tiny" --print -s "$say" --stage lens --stage next --top 3 >"$tmp/a" &&
    grep -q "^logit lens after '.': each layer's stream through ln_f and wte" "$tmp/a" &&
    [ "$(grep '^  layer   1 ' "$tmp/a" | sed 's/^  layer   1 *//')" = "$(grep '^    17  \.  ' "$tmp/a" | sed 's/^    17  \. *//')" ] ||
    fail "--stage lens: the last layer's lens is the model's own prediction: $(cat "$tmp/a")"
count=$((count + 1))
"$bin" --model "$tiny" --print -s "$say" --stage next --ablate 1.0 --ablate 0.1 >"$tmp/a" &&
    grep -q "^  2 heads ablated (--ablate): their context zeroed before c_proj$" "$tmp/a" &&
    "$bin" --model "$tiny" --print -s "$say" --stage next >"$tmp/b" && ! cmp -s "$tmp/a" "$tmp/b" ||
    fail "--ablate: the header says it and the next tokens change"

# Before the view can draw (a model read, packed, run once), a line on the
# terminal says so at once and is cleared (issue 27, item 15); through
# script(1), the terminal here refuses the view, so the run ends at once.
if command -v script >/dev/null 2>&1; then
    count=$((count + 1))
    script -q -c "env TERM=dumb '$bin' --model '$tiny' -s 'the cat'" "$tmp/typescript" >/dev/null 2>&1
    esc=$(printf '\033')
    grep -aq "attnscope: starting (Ctrl-C stops)" "$tmp/typescript" &&
        grep -aq "${esc}\[K.*attnscope: the terminal 'dumb' cannot move the cursor" "$tmp/typescript" ||
        fail "the start-up line: $(cat -v "$tmp/typescript")"
fi


# Writing (--generate): the book's generate on the shipped chapter-5 model, token for token
# PyTorch's (tests/fixtures/generate/cases.txt, chapter5-greedy and chapter5-k25-t1.4).
ch5="$src/samples/models/chapter5/model.pth"
count=$((count + 1))
"$bin" --model "$ch5" --heads 2 -s "Every effort moves you" --generate 5 --print >"$tmp/gen" 2>"$tmp/gen-err" ||
    fail "--generate 5 --print: $(cat "$tmp/gen-err")"
[ "$(grep -c '^  *[1-5]  *[4-8]  *198  \\n ' "$tmp/gen")" -eq 5 ] &&
    grep -qF "writing 5 tokens as the book's generate does: greedy (argmax of the logits)" "$tmp/gen" &&
    grep -qF "text (4 tokens of prompt, 5 written):" "$tmp/gen" &&
    grep -qF "kv cache: 2 x 2 layers x 9 tokens x 16 (kv width) x 4 bytes = 2304 bytes" "$tmp/gen" &&
    grep -qF "attnscope: wrote 5 tokens in " "$tmp/gen-err" || fail "--generate 5, greedy: $(cat "$tmp/gen")"
count=$((count + 1))
"$bin" --model "$ch5" --heads 2 -s "Every effort moves you" --generate 5 --sample-temperature 1.4 --top-k 25 \
    --print --format csv >"$tmp/gen.csv" 2>/dev/null
printf '%s\n' "# generated" "step,position,id,token,probability" >"$tmp/gen-want"
[ "$(sed -n '1,2p' "$tmp/gen.csv")" = "$(cat "$tmp/gen-want")" ] &&
    [ "$(sed -n '3,7p' "$tmp/gen.csv" | cut -d, -f3 | tr '\n' ' ')" = "4268 45 13 1495 13 " ] ||
    fail "--generate 5 sampled at 1.4, top-k 25: not PyTorch's 4268 45 13 1495 13: $(cat "$tmp/gen.csv")"
# --export: the final text's files and generated.csv, all at once.
count=$((count + 1))
"$bin" --model "$ch5" --heads 2 -s "Every effort moves you" --generate 3 --sample-temperature 1 --top-k 3 \
    --export "$tmp/gen-export" 2>"$tmp/gen-err" || fail "--generate --export: $(cat "$tmp/gen-err")"
[ "$(head -1 "$tmp/gen-export/generated.csv")" = "step,position,id,token,probability" ] &&
    [ "$(sed 1d "$tmp/gen-export/generated.csv" | cut -d, -f1-4 | tr '\n' ' ')" = "1,4,12,- 2,5,67,d 3,6,654,ings " ] &&
    [ "$(wc -l <"$tmp/gen-export/tokens.csv")" -eq 8 ] && [ -f "$tmp/gen-export/layer1/weights.h1.csv" ] ||
    fail "--generate --export: $(cat "$tmp/gen-export/generated.csv")"
# The end token stops the writing, unwritten (the book's eos_id).
count=$((count + 1))
"$bin" --model "$ch5" --heads 2 -s "Every effort moves you" --generate 5 --eos 198 --print >"$tmp/gen" 2>/dev/null
grep -qF "  the model chose \n (id 198, p drawn 0.0709): the writing stops there (--eos)" "$tmp/gen" &&
    grep -qF "text (4 tokens of prompt, 0 written):" "$tmp/gen" || fail "--eos 198: $(cat "$tmp/gen")"
# Past the context (64): the window slides, said once.
count=$((count + 1))
"$bin" --model "$ch5" --heads 2 -s "Every effort moves you" --generate 62 --print >"$tmp/gen" 2>/dev/null
[ "$(grep -c "the text is past the model's context of 64 tokens" "$tmp/gen")" -eq 1 ] &&
    grep -qF "text (4 tokens of prompt, 62 written):" "$tmp/gen" &&
    grep -qF "kv cache: 2 x 2 layers x 64 tokens x 16 (kv width)" "$tmp/gen" || fail "--generate past the context: $(tail -5 "$tmp/gen")"
# A Qwen3.5 (tests/fixtures/decoders/qwen35: DeltaNet layers 0-2, one full layer): the cache is
# the full layer's keys and values beside each DeltaNet layer's state, which does not grow.  By
# hand from its config: 2 x 11 rows x 16 (1 key head of 16) x 4 = 1408 bytes; a state 2 value heads
# x 8 x 8 = 128 floats and the convolution's 3 last inputs of 48 channels (q, k, v: 3 x 2 x 8) =
# 144 floats: 1088 bytes, three of them 3264; at 32768 rows 4194304 + 3264 bytes, 4.0 MiB.
count=$((count + 1))
"$bin" --model "$src/tests/fixtures/decoders/qwen35" -s "the cat sat" --generate 2 --print >"$tmp/gen" 2>/dev/null
grep -qF "kv cache: 1 attention layer's keys and values (1408 bytes: 2 x 11 tokens x 16 (kv width) x 4 bytes a layer) + 3 Gated DeltaNet layers' states (a state per value head and the convolution's last inputs: 1.1 KiB each, the same at any length) = 4672 bytes (4.6 KiB; at 32768 tokens: 4.0 MiB)" "$tmp/gen" ||
    fail "--generate on a Qwen3.5: the cache's size: $(grep 'kv cache' "$tmp/gen")"
# Bad input, named.
expect 2 "--generate is a trained model's (--model): the book's classes have no vocabulary head to write from" -- --print --generate 3
expect 2 "--top-k is a trained model's (--model)" -- --print --top-k 3
expect 2 "--generate -1: give a number from 0 to 1000000" -- --model "$ch5" --heads 2 --print --generate -1
expect 2 "--top-k 0: give 1 or more (without it nothing is cut)" -- --model "$ch5" --heads 2 --print --generate 1 --top-k 0
expect 2 "--top-k 60000: give 1 to the vocabulary's 50257 tokens" -- --model "$ch5" --heads 2 --print --generate 1 --top-k 60000
expect 2 "--top-p 0: give a number above 0, at most 1 (1: no cut)" -- --model "$ch5" --heads 2 --print --generate 1 --top-p 0
expect 2 "--top-p 1.5: give a number above 0, at most 1" -- --model "$ch5" --heads 2 --print --generate 1 --top-p 1.5
expect 2 "--sample-temperature -1: give 0 (greedy: the likeliest token) or a number above 0" -- --model "$ch5" --heads 2 --print --generate 1 --sample-temperature -1
expect 2 "--sample-temperature: 'nan' is not a finite number" -- --model "$ch5" --heads 2 --print --generate 1 --sample-temperature nan
expect 2 "--eos 'no such token': no token of model.pth's tokenizer" -- --model "$ch5" --heads 2 --print --generate 1 --eos 'no such token'
# --eos by a token's text, as the vocabulary spells it or by its bytes (issue 50, item 7); by
# default the end tokens the model's files name, said; the book's .pth none.
count=$((count + 1))
"$bin" --model "$ch5" --heads 2 -s "Every effort moves you" --generate 5 --eos 'Ċ' --print >"$tmp/gen-text" 2>&1
grep -qF "; stops at \n (198) (--eos)" "$tmp/gen-text" && grep -qF "the writing stops there (--eos)" "$tmp/gen-text" ||
    fail "--eos Ċ (GPT-2's spelling of a newline): $(head -3 "$tmp/gen-text")"
count=$((count + 1))
"$bin" --model "$ch5" --heads 2 -s "Every effort moves you" --generate 2 --print >"$tmp/gen" 2>&1
grep -q "^writing 2 tokens as the book's generate does: greedy (argmax of the logits)\$" "$tmp/gen" ||
    fail "the book's .pth stops at no token by default: $(head -3 "$tmp/gen")"
count=$((count + 1))
"$bin" --model "$src/samples/models/minigpt" -s "cat map" --generate 2 --print >"$tmp/gen" 2>&1
grep -qF "; stops at <|endoftext|> (519) (config.json's eos_token_id; --eos none writes on)" "$tmp/gen" ||
    fail "a Hugging Face folder's eos_token_id by default: $(head -3 "$tmp/gen")"
count=$((count + 1))
"$bin" --model "$src/samples/models/minigpt" -s "cat map" --generate 2 --eos none --print >"$tmp/gen" 2>&1
grep -q "^writing 2 tokens as the book's generate does: greedy (argmax of the logits)\$" "$tmp/gen" ||
    fail "--eos none: $(head -3 "$tmp/gen")"
count=$((count + 1))
"$bin" --model "$src/samples/models/minigpt" -s "cat map" --generate 2 --eos '<|endoftext|>' --print >"$tmp/gen" 2>&1
grep -qF "; stops at <|endoftext|> (519) (--eos)" "$tmp/gen" || fail "--eos '<|endoftext|>': $(head -3 "$tmp/gen")"
expect 2 "--eos 50257: give a token id from 0 to 50256, or none" -- --model "$ch5" --heads 2 --print --generate 1 --eos 50257
expect 2 "--top-p chooses what a model writes: give --generate N" -- --model "$ch5" --heads 2 --print --top-p 0.5
expect 0 "wrote 2 files" -- --model "$ch5" --heads 2 --export "$tmp/nothing" --stage heads --generate 0 --eos none
[ "$(cat "$tmp/nothing/generated.csv")" = "step,position,id,token,probability" ] || fail "--generate 0: generated.csv"
# Ctrl-C while writing: the tokens written so far are kept and printed, the exit status says so.
count=$((count + 1))
mkfifo "$tmp/gen-fifo"
"$bin" --model "$ch5" --heads 2 -s "Every effort moves you" --generate 100000 --print >"$tmp/gen-fifo" 2>"$tmp/gen-err" &
pid=$!
exec 3<"$tmp/gen-fifo"
while IFS= read -r line <&3; do
    case "$line" in "     1         4 "*) break ;; esac
done
kill -INT "$pid"
cat <&3 >"$tmp/gen-rest"
exec 3<&-
wait "$pid"
rc=$?
[ "$rc" -eq 130 ] && grep -q "^text (4 tokens of prompt, [0-9]* written):" "$tmp/gen-rest" &&
    grep -q "^attnscope: stopped after [0-9]* of 100000 tokens (Ctrl-C): what was written is kept" "$tmp/gen-err" ||
    fail "Ctrl-C while writing: exit $rc, $(tail -3 "$tmp/gen-rest"), $(cat "$tmp/gen-err")"

# Figures: what the view would open on, in the format the name asks for (check_figure reads them back).
expect 0 "wrote $tmp/fig.svg: weights, head 1, " -- --figure "$tmp/fig.svg" --stage weights --head 1
expect 0 "wrote $tmp/fig.png: scores, every head, " -- --figure "$tmp/fig.png" --stage scores --view grid
expect 0 "wrote $tmp/map.pdf: the map screen, " -- --figure "$tmp/map.pdf" --model "$tiny" -s "$say" --view map
expect 2 "$tmp/fig.gif: a figure's name ends in .svg, .png or .pdf" -- --figure "$tmp/fig.gif"
expect 1 "cannot write $tmp/none/fig.svg: " -- --figure "$tmp/none/fig.svg"
expect 2 "--stage weights.h12: head out of range; the heads are 0-1" -- --figure "$tmp/f.svg" --stage weights.h12
expect 2 "--head 5.1: layer out of range; the layers are 0-1" -- --figure "$tmp/f.svg" --model "$tiny" -s "$say" --head 5.1
expect 2 "--stage masked: the simple variant's class has no mask step, so the view does not show one" -- --figure "$tmp/f.svg" --variant simple --stage masked
expect 2 "--view lens: no such screen; choose stage, grid, map, overview, sentence or next" -- --figure "$tmp/f.svg" --view lens
expect 2 "--walkthrough: each step says what it shows; drop --figure" -- --figure "$tmp/f.svg" --walkthrough 01-no-weights

# A GGUF file as llama.cpp keeps one: the model, its quantization mix and its own tokenizer (the
# file, or LM Studio's folder of one .gguf); a GGUF's damage named by the file.
gguf="$src/tests/fixtures/decoders/qwen3-tok-gguf"
for what in "$gguf/model.gguf" "$gguf"; do
    count=$((count + 1))
    if "$bin" --print --model "$what" -s "the cat sat on the mat" >"$tmp/gguf" 2>&1; then
        grep -qF "(GGUF: Q8_0 14 tensors, F32 10); sizes: its GGUF metadata; tokenizer: $gguf/model.gguf" \
            "$tmp/gguf" || fail "--model $what: $(head -3 "$tmp/gguf")"
        grep -q "^         2     261  ·cat$" "$tmp/gguf" || fail "--model $what: not its tokenizer's ids"
    else
        fail "--model $what: $(head -3 "$tmp/gguf")"
    fi
done
# An Ollama model by the name `ollama run` takes: its manifest names the blob (a GGUF file).
mkdir -p "$tmp/ollama/manifests/registry.ollama.ai/library/tiny" "$tmp/ollama/blobs"
hex=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
cp "$gguf/model.gguf" "$tmp/ollama/blobs/sha256-$hex"
printf '{"schemaVersion":2,"layers":[{"mediaType":"application/vnd.ollama.image.template","digest":"sha256:%s","size":1},{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:%s","size":1}]}' \
    "$hex" "$hex" >"$tmp/ollama/manifests/registry.ollama.ai/library/tiny/q8"
count=$((count + 1))
OLLAMA_MODELS="$tmp/ollama" "$bin" --print --model tiny:q8 -s "the cat" >"$tmp/ollama.out" 2>&1 &&
    grep -q "^attnscope: tiny:q8 (Qwen3 from $tmp/ollama/blobs/sha256-$hex" "$tmp/ollama.out" ||
    fail "--model tiny:q8 from Ollama: $(head -2 "$tmp/ollama.out")"
# A qwen3.5 blob as Ollama's own converter writes its library's (tests/fixtures/decoders/
# qwen35-ollama): opened by its name, the layers' kinds from its head_count_kv, what it holds
# beside the text model said.
q35hex=abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789
cp "$src/tests/fixtures/decoders/qwen35-ollama/model.gguf" "$tmp/ollama/blobs/sha256-$q35hex"
mkdir -p "$tmp/ollama/manifests/registry.ollama.ai/library/qwen3.5"
sed "s/$hex/$q35hex/g" "$tmp/ollama/manifests/registry.ollama.ai/library/tiny/q8" \
    >"$tmp/ollama/manifests/registry.ollama.ai/library/qwen3.5/tiny"
count=$((count + 1))
OLLAMA_MODELS="$tmp/ollama" "$bin" --print --model qwen3.5:tiny --stage next -s '"! #"!' \
    >"$tmp/q35.out" 2>&1 &&
    grep -q "^attnscope: qwen3.5:tiny (Qwen3.5 from $tmp/ollama/blobs/sha256-$q35hex" "$tmp/q35.out" &&
    grep -q "not read: the vision tower's 5 tensors and the multi-token head's 15 tensors" "$tmp/q35.out" &&
    grep -q "Gated DeltaNet on layers 0 2 " "$tmp/q35.out" ||
    fail "--model qwen3.5:tiny from Ollama: $(head -4 "$tmp/q35.out")"
OLLAMA_MODELS="$tmp/ollama" expect 1 "--model tiny:q4: no such file or folder, and no Ollama model of that name: Ollama's folders (OLLAMA_MODELS=$tmp/ollama, " -- --print --model tiny:q4
# Where it looked and the tags it found of the name (issue 50, item 11).
OLLAMA_MODELS="$tmp/ollama" expect 1 "/usr/share/ollama/.ollama/models) have tiny:q8, not tiny:q4" -- --print --model tiny:q4
OLLAMA_MODELS="$tmp/ollama" expect 1 "have no nosuch (\`ollama pull nosuch:7b\` fetches it)" -- --print --model nosuch:7b
# A bare name beside its tags (issue 62, item 8): the tag is what was meant, not a download.
OLLAMA_MODELS="$tmp/ollama" expect 1 "/usr/share/ollama/.ollama/models) have tiny:q8, not tiny:latest: name the tag, as in \`--model tiny:q8\`" -- --print --model tiny
grep -q "huggingface" "$tmp/err" && fail "--model tiny (Ollama has tiny:q8) suggests a download: $(cat "$tmp/err")"
# --verify: the blob hashed against its name (a wrong name refused, the right one read).
OLLAMA_MODELS="$tmp/ollama" expect 1 "its SHA-256 is " -- --print --verify --model tiny:q8
real=$(sha256sum "$gguf/model.gguf" | cut -c1-64)
mkdir -p "$tmp/ollama/manifests/registry.ollama.ai/library/real"
cp "$gguf/model.gguf" "$tmp/ollama/blobs/sha256-$real"
sed "s/$hex/$real/g" "$tmp/ollama/manifests/registry.ollama.ai/library/tiny/q8" \
    >"$tmp/ollama/manifests/registry.ollama.ai/library/real/latest"
count=$((count + 1))
OLLAMA_MODELS="$tmp/ollama" "$bin" --print --stage tokens --verify --model real -s "the cat" \
    >"$tmp/verified" 2>&1 && grep -qF "attnscope: --verify: sha256-$real's SHA-256 is the one it is named by: the weights are whole" "$tmp/verified" ||
    fail "--verify --model real: $(head -2 "$tmp/verified")"
# An Ollama model's params layer (issue 50, item 9): temperature, top_k, top_p as the
# writing's defaults, stop as end tokens (one token each, else said not taken), num_ctx the
# context; said on stderr; the command line wins.
printf '{"temperature":0.6,"top_k":20,"top_p":0.95,"stop":["he","two words"],"num_ctx":8}' \
    >"$tmp/params.json"
phex=$(sha256sum "$tmp/params.json" | cut -c1-64)
cp "$tmp/params.json" "$tmp/ollama/blobs/sha256-$phex"
mkdir -p "$tmp/ollama/manifests/registry.ollama.ai/library/withparams"
printf '{"schemaVersion":2,"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:%s","size":1},{"mediaType":"application/vnd.ollama.image.params","digest":"sha256:%s","size":1}]}' \
    "$real" "$phex" >"$tmp/ollama/manifests/registry.ollama.ai/library/withparams/latest"
count=$((count + 1))
OLLAMA_MODELS="$tmp/ollama" "$bin" --print --model withparams -s "the cat" --generate 2 >"$tmp/params.out" 2>&1 &&
    grep -qF "attnscope: Ollama's params for withparams:latest: temperature 0.6 top_k 20 top_p 0.95 stop he, two words (not one token: not taken) num_ctx 8 (the command line wins)" "$tmp/params.out" &&
    grep -qF "top-k 20 (logits below the likeliest 20's smallest set to -inf), logits / 0.6, top-p 0.95" "$tmp/params.out" &&
    grep -qF "stops at <|endoftext|> (268) or he (257) (its GGUF's tokenizer.ggml.eos_token_id and the stop of Ollama's params; --eos none writes on)" "$tmp/params.out" ||
    fail "an Ollama model's params: $(head -5 "$tmp/params.out")"
count=$((count + 1))
OLLAMA_MODELS="$tmp/ollama" "$bin" --print --model withparams -s "the cat" --generate 2 --sample-temperature 0 \
    >"$tmp/params.out" 2>&1 && grep -qF "top-k 20 (logits below the likeliest 20's smallest set to -inf), greedy" "$tmp/params.out" ||
    fail "the command line over Ollama's params: $(head -5 "$tmp/params.out")"
count=$((count + 1))
OLLAMA_MODELS="$tmp/ollama" "$bin" --print --model withparams -s "the cat sat on the mat and the dog sat on the log" \
    >"$tmp/params.out" 2>&1
[ $? -eq 2 ] && grep -qF "withparams:latest reads at most 8 (num_ctx in Ollama's params)" "$tmp/params.out" ||
    fail "num_ctx of Ollama's params: $(cat "$tmp/params.out")"
# --chat (issue 50, item 8): the message in the model's own template (a folder's
# chat_template.jinja or tokenizer_config.json's chat_template, a GGUF's), the header saying
# which; no template, an unknown one, and --chat beside -s refused by name.
mkdir -p "$tmp/chat"
for f in config.json model.safetensors tokenizer.json; do cp "$src/samples/models/minillama/$f" "$tmp/chat/"; done
cp "$src/tests/fixtures/chat/qwen3.jinja" "$tmp/chat/chat_template.jinja"
count=$((count + 1))
"$bin" --print --stage tokens --model "$tmp/chat" --chat "cat map" >"$tmp/chat.out" 2>&1 &&
    grep -qF "  chat: the message in the ChatML chat template (chat_template.jinja), the assistant's turn begun" "$tmp/chat.out" &&
    [ "$(grep -c '^ *[0-9]* *[0-9]*  \(cat\|·map\)$' "$tmp/chat.out")" -eq 2 ] ||
    fail "--chat with chat_template.jinja: $(head -12 "$tmp/chat.out")"
rm "$tmp/chat/chat_template.jinja"
printf '{"chat_template": "{{ bos_token }}{%% for m in messages %%}<start_of_turn>{{ m.role }}\\n{{ m.content | trim }}<end_of_turn>\\n{%% endfor %%}<start_of_turn>model\\n", "bos_token": "<|endoftext|>"}' \
    >"$tmp/chat/tokenizer_config.json"
count=$((count + 1))
"$bin" --print --stage tokens --model "$tmp/chat" --chat "cat" >"$tmp/chat.out" 2>&1 &&
    grep -qF "  chat: the message in the Gemma chat template (tokenizer_config.json's chat_template)" "$tmp/chat.out" &&
    grep -q '^ *0 *519  <|endoftext|>$' "$tmp/chat.out" ||
    fail "--chat with tokenizer_config.json: $(head -12 "$tmp/chat.out")"
printf '{"chat_template": "{%% for m in messages %%}### {{ m.role }}: {{ m.content }}{%% endfor %%}"}' >"$tmp/chat/tokenizer_config.json"
expect 2 "--chat: chat's tokenizer_config.json's chat_template: a chat template of no family attnscope knows (it knows ChatML" -- --print --model "$tmp/chat" --chat hi
rm "$tmp/chat/tokenizer_config.json"
expect 2 "--chat: chat has no chat template" -- --print --model "$tmp/chat" --chat hi
expect 2 "--chat and --sentence: choose one" -- --print --model "$tmp/chat" --chat hi -s hello
expect 2 "--chat is a trained model's (--model)" -- --print --chat hi
# LM Studio's publisher/model, under either of its folders: the folder's one GGUF, or the
# quantizations named when there are several.
mkdir -p "$tmp/home/.cache/lm-studio/models/pub/tiny-GGUF"
cp "$gguf/model.gguf" "$tmp/home/.cache/lm-studio/models/pub/tiny-GGUF/tiny-Q8_0.gguf"
count=$((count + 1))
HOME="$tmp/home" "$bin" --print --stage tokens --model pub/tiny-GGUF -s "the cat" >"$tmp/lms" 2>&1 &&
    grep -qF "attnscope: tiny-GGUF (Qwen3 from $tmp/home/.cache/lm-studio/models/pub/tiny-GGUF/tiny-Q8_0.gguf" "$tmp/lms" ||
    fail "--model pub/tiny-GGUF from LM Studio: $(head -2 "$tmp/lms")"
cp "$gguf/model.gguf" "$tmp/home/.cache/lm-studio/models/pub/tiny-GGUF/tiny-Q4_K_M.gguf"
HOME="$tmp/home" expect 2 "pub/tiny-GGUF holds 2 quantizations (" -- --print --model pub/tiny-GGUF
HOME="$tmp/home" expect 1 "nor in LM Studio's folders ($tmp/home/.lmstudio/models, $tmp/home/.cache/lm-studio/models)" -- --print --model pub/other-GGUF
expect 2 "--verify works with --model" -- --print --verify
rm "$tmp/ollama/blobs/sha256-$hex"
OLLAMA_MODELS="$tmp/ollama" expect 1 "library/tiny/q8 names the weights $tmp/ollama/blobs/sha256-$hex, which is not there (pull it again: \`ollama pull tiny:q8\`)" -- --print --model tiny:q8
head -c 100 "$gguf/model.gguf" >"$tmp/cut.gguf"
expect 1 "$tmp/cut.gguf: " -- --print --model "$tmp/cut.gguf"
# A damaged GGUF says what is wrong with it, alone in a folder (LM Studio's) or named, and when
# no GPT-2 tokenizer could be borrowed (issue 48: "<folder>: no tokenizer ... found no copy").
mkdir -p "$tmp/lmstudio" "$tmp/v1"
head -c 3000 "$gguf/model.gguf" >"$tmp/lmstudio/model.gguf"
cp "$gguf/model.gguf" "$tmp/v1/model.gguf"
printf '\001' | dd of="$tmp/v1/model.gguf" bs=1 seek=4 conv=notrunc 2>/dev/null
for what in "$tmp/lmstudio" "$tmp/lmstudio/model.gguf"; do
    ATTNSCOPE_TOKENIZERS=/nonexistent TIKTOKEN_CACHE_DIR= HF_HUB_CACHE=/nonexistent \
        expect 1 "$tmp/lmstudio/model.gguf: an array's string (8 bytes at byte 2993) runs past the end of the file (3000 bytes)" -- --print --model "$what"
done
ATTNSCOPE_TOKENIZERS=/nonexistent TIKTOKEN_CACHE_DIR= HF_HUB_CACHE=/nonexistent \
    expect 1 "$tmp/v1/model.gguf: GGUF version 1 (attnscope reads 2 and 3)" -- --print --model "$tmp/v1"
# An Ollama blob that is there but not a file, or not a GGUF: what it is (issue 48: "not there").
mkdir -p "$tmp/ollama/manifests/registry.ollama.ai/library/odd"
odd=fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210
sed "s/$hex/$odd/g" "$tmp/ollama/manifests/registry.ollama.ai/library/tiny/q8" \
    >"$tmp/ollama/manifests/registry.ollama.ai/library/odd/latest"
blob="$tmp/ollama/blobs/sha256-$odd"
for kind in "/dev/zero:is a device, not a file" "fifo:is a FIFO, not a file" \
    "folder:is a folder, not a file" "text:"; do
    rm -rf "$blob"
    case ${kind%%:*} in
    /dev/zero) ln -s /dev/zero "$blob" ;;
    fifo) mkfifo "$blob" ;;
    folder) mkdir "$blob" ;;
    text) printf 'not a model at all' >"$blob" ;;
    esac
    if [ "${kind%%:*}" = text ]; then
        OLLAMA_MODELS="$tmp/ollama" ATTNSCOPE_TOKENIZERS=/nonexistent TIKTOKEN_CACHE_DIR= \
            expect 1 "$blob: " -- --print --model odd
        grep -q "no tokenizer" "$tmp/err" && fail "--model odd (a blob of text): $(cat "$tmp/err")"
    else
        OLLAMA_MODELS="$tmp/ollama" expect 1 "library/odd/latest names the weights $blob: ${kind#*:} (pull it again" -- --print --model odd
    fi
done
rm -rf "$blob"

# A model's file never drives the terminal (issue 48): tokens holding a title-setting OSC and a
# screen clear, a C1 CSI and a bidi override, one of them the BOS, are printed escaped by --print
# and --generate (which, at seed 1 and T 1000, writes both of the others).
mkdir -p "$tmp/esc"
cp "$src/tests/fixtures/decoders/llama-gqa/model.safetensors" "$tmp/esc/"
sed 's/"vocab_size": 40,/"vocab_size": 40, "bos_token_id": 36,/' \
    "$src/tests/fixtures/decoders/llama-gqa/config.json" >"$tmp/esc/config.json"
added='{"id": 36, "content": "\\u001b]2;pwned\\u0007\\u001b[2J", "special": true}, {"id": 37, "content": "x\\u009b31m", "special": true}, {"id": 38, "content": "\\u202eevil", "special": true}'
sed "s/\"added_tokens\": \[\]/\"added_tokens\": [$added]/" "$src/tests/fixtures/decoders/llama-gqa/tokenizer.json" \
    >"$tmp/esc/tokenizer.json"
count=$((count + 1))
"$bin" --print --model "$tmp/esc" --bos -s "the cat" >"$tmp/esc.out" 2>&1 &&
    "$bin" --print --model "$tmp/esc" -s "the cat" --generate 60 --sample-temperature 1000 --seed 1 \
        >>"$tmp/esc.out" 2>&1 || fail "a model with escapes in its tokens: $(tail -3 "$tmp/esc.out")"
for bad in 'ESC \033' 'BEL \007' 'CSI \302\233' 'RLO \342\200\256'; do
    grep -qF "$(printf "${bad#* }")" "$tmp/esc.out" && fail "--print wrote a token's ${bad%% *} as it is"
done
for shown in '\x1b]2;pwned\x07\x1b[2J' 'x\xc2\x9b31m' '\xe2\x80\xaeevil'; do
    grep -qF -- "$shown" "$tmp/esc.out" || fail "--print lacks a token escaped as it should be"
done

# Ctrl-C while standard output is full (a pager paused, issue 48): the write blocked then goes
# on, the rows and the text are kept, and the exit is 130.  The reader opens a FIFO and reads
# nothing until attnscope is blocked writing to it (its /proc syscall: write, fd 1).
count=$((count + 1))
mkfifo "$tmp/paused"
"$bin" --print --model "$src/tests/fixtures/decoders/llama-gqa" -s "the cat" --generate 3000 \
    --sample-temperature 1 >"$tmp/paused" 2>"$tmp/paused.err" &
writer=$!
exec 3<"$tmp/paused"
tries=0
until [ "$(cut -d' ' -f1,2 "/proc/$writer/syscall" 2>/dev/null)" = "1 0x1" ]; do
    tries=$((tries + 1))
    [ "$tries" -gt 6000 ] && break
    sleep 0.01
done
kill -INT "$writer"
cat <&3 >"$tmp/paused.out"
exec 3<&-
wait "$writer"
status=$?
if [ "$tries" -gt 6000 ]; then
    fail "Ctrl-C into a full pipe: attnscope never blocked writing"
elif [ "$status" -ne 130 ] || ! grep -q "stopped after [0-9]* of 3000 tokens (Ctrl-C): what was written is kept" "$tmp/paused.err" ||
    ! grep -q "^kv cache: " "$tmp/paused.out" || ! grep -q "^text ([0-9]* tokens of prompt, [0-9]* written):" "$tmp/paused.out"; then
    fail "Ctrl-C into a full pipe: exit $status, $(cat "$tmp/paused.err"), $(tail -c 300 "$tmp/paused.out")"
fi

# "Build a Reasoning Model"'s files: tokenizer-base.json and tokenizer-reasoning.json beside
# qwen3-0.6B-base.pth, -reasoning.pth and RL checkpoints; the one a file's name pairs with.
mkdir -p "$tmp/reasoning"
for f in qwen3-0.6B-base qwen3-0.6B-reasoning qwen3-0.6B-rlvr-grpo-step00050; do
    cp "$src/tests/fixtures/decoders/qwen3-book/model.pth" "$tmp/reasoning/$f.pth"
done
for t in base reasoning; do
    cp "$src/tests/fixtures/decoders/qwen3/tokenizer.json" "$tmp/reasoning/tokenizer-$t.json"
done
for case in "qwen3-0.6B-base tokenizer-base.json" "qwen3-0.6B-reasoning tokenizer-reasoning.json" \
    "qwen3-0.6B-rlvr-grpo-step00050 tokenizer-base.json"; do
    set -- $case
    count=$((count + 1))
    "$bin" --print --stage tokens --model "$tmp/reasoning/$1.pth" -s "the cat" >"$tmp/paired" 2>&1 &&
        grep -qF "tokenizer: $tmp/reasoning/$2" "$tmp/paired" || fail "--model $1.pth: $(head -3 "$tmp/paired")"
done
rm "$tmp/reasoning/tokenizer-base.json"
count=$((count + 1))
"$bin" --print --stage tokens --model "$tmp/reasoning/qwen3-0.6B-base.pth" -s "the cat" >"$tmp/paired" 2>&1 &&
    grep -qF "tokenizer: $tmp/reasoning/tokenizer-reasoning.json" "$tmp/paired" ||
    fail "--model qwen3-0.6B-base.pth with only tokenizer-reasoning.json: $(head -3 "$tmp/paired")"

# The KV cache by name (issue 50, items 5 and 10): --stage kv (or cache) prints, exports and
# draws it; a sliding layer's is the ring of its window (minigemma: layer 0 slides over 4 keys).
gemma="$src/samples/models/minigemma"
ring_text="cat map sun red fox ink owl jam cat map sun red fox ink owl jam"
count=$((count + 1))
"$bin" --model "$gemma" --bos -s "$ring_text" --stage kv --print >"$tmp/kv" 2>&1 &&
    grep -qF "kv cache of layer 0: 4 of 17 rows (it slides: a ring of its window" "$tmp/kv" &&
    grep -qF "kv cache, layer 0, key head 1 of 2 (4 x 32): k then v" "$tmp/kv" &&
    grep -q '^  \[0\]·jam#16 ' "$tmp/kv" && grep -q '^  \[1\]·fox#13 ' "$tmp/kv" ||
    fail "--stage kv --print, a sliding layer: $(head -12 "$tmp/kv")"
count=$((count + 1))
"$bin" --model "$gemma" --bos -s "$ring_text" --stage cache --layer 1 --print >"$tmp/kv" 2>&1 &&
    grep -qF "kv cache of layer 1: 17 of 17 rows, 4.2 KiB (all 2 layers: 5.2 KiB; every row of every layer: 8.5 KiB)" "$tmp/kv" ||
    fail "--stage cache --layer 1 --print, a full layer: $(head -12 "$tmp/kv")"
count=$((count + 1))
"$bin" --model "$gemma" --bos -s "$ring_text" --stage kv --export "$tmp/kv-export" >/dev/null 2>&1 &&
    [ "$(sed -n 1p "$tmp/kv-export/layer0/kv_cache.csv" | cut -d, -f1-6)" = "slot,position,id,token,head,k0" ] &&
    [ "$(wc -l <"$tmp/kv-export/layer0/kv_cache.csv")" -eq 9 ] &&
    [ "$(wc -l <"$tmp/kv-export/layer1/kv_cache.csv")" -eq 35 ] &&
    [ "$(sed -n 2p "$tmp/kv-export/layer0/kv_cache.csv" | cut -d, -f1,2,4)" = '0,16," jam"' ] ||
    fail "--stage kv --export: $(ls -R "$tmp/kv-export" 2>&1; head -3 "$tmp/kv-export/layer0/kv_cache.csv")"
count=$((count + 1))
"$bin" --model "$gemma" --bos -s "$ring_text" --stage kv --figure "$tmp/kv.svg" >/dev/null 2>"$tmp/kv-err" &&
    grep -qF "kv.svg: cache, head 0, " "$tmp/kv-err" && [ -s "$tmp/kv.svg" ] || fail "--stage kv --figure: $(cat "$tmp/kv-err")"
count=$((count + 1))
"$bin" --model "$gemma" --bos -s "$ring_text" --generate 3 --print >"$tmp/kv" 2>/dev/null &&
    grep -qF "kv cache: 2 x (1 full layer x 20 tokens + 1 sliding layer x 4 rows, a ring of each window) x 32 (kv width) x 4 bytes = 6144 bytes (6.0 KiB, 4.0 KiB less than every row of every layer)" "$tmp/kv" ||
    fail "--generate on a sliding model: the cache's size: $(grep 'kv cache' "$tmp/kv")"

# --print and --export in one run (issue 50, item 6): the tables on stdout, the files in the
# folder, the same numbers; with --generate, generated.csv too.
count=$((count + 1))
"$bin" --print --format csv --stage weights.h0 --export "$tmp/both" >"$tmp/both.out" 2>"$tmp/both.err" &&
    [ -f "$tmp/both/weights.h0.csv" ] && grep -q '^# ' "$tmp/both.out" &&
    grep -qF "wrote 1 file into $tmp/both" "$tmp/both.err" ||
    fail "--print --export, the book's: $(cat "$tmp/both.err")"
count=$((count + 1))
"$bin" --model "$gemma" --bos -s "cat map sun" --generate 3 --export "$tmp/both-gen" --print \
    >"$tmp/both.out" 2>"$tmp/both.err" &&
    grep -q "^text (4 tokens of prompt, 3 written):" "$tmp/both.out" &&
    [ "$(wc -l <"$tmp/both-gen/generated.csv")" -eq 4 ] && [ -f "$tmp/both-gen/tokens.csv" ] ||
    fail "--generate --export --print: $(cat "$tmp/both.err"; ls "$tmp/both-gen" 2>&1)"

# A mixture of experts (issue 52): the router's stage, where each token went, experts.csv.
moe="${top_srcdir:-.}/tests/fixtures/decoders/qwen3-moe"
count=$((count + 1))
"$bin" --model "$moe" -s "the cat sat" --print --stage router >"$tmp/moe.out" 2>"$tmp/moe.err" &&
    grep -qF "layer 0, router (9 x 6): softmax(ln2 W_router); each token's top k, divided by their sum" "$tmp/moe.out" &&
    grep -qF "layer 0, each token's 2 of 6 experts, the router's first choice first" "$tmp/moe.out" &&
    grep -qF "its sparse layers' router is gate, each expert's gate_proj, up_proj and down_proj" "$tmp/moe.out" &&
    "$bin" --model "${top_srcdir:-.}/tests/fixtures/decoders/gpt-oss" -s "the cat" --print --stage tokens 2>/dev/null |
        grep -qF "its sparse layers' router is router, each expert's gate_up_proj and down_proj" ||
    fail "--print --stage router: $(cat "$tmp/moe.err" "$tmp/moe.out")"
count=$((count + 1))
"$bin" --model "$moe" -s "the cat sat" --print --stage fc 2>"$tmp/moe.err" >/dev/null;
grep -qF -- "--stage fc: no such stage here" "$tmp/moe.err" &&
    "$bin" --model "$moe" -s "the cat sat" --layer 1 --print --stage fc >/dev/null 2>&1 &&
    ! "$bin" --model "$moe" -s "the cat sat" --layer 1 --print --stage router >/dev/null 2>&1 ||
    fail "a sparse layer has no fc, a dense one no router: $(cat "$tmp/moe.err")"
count=$((count + 1))
"$bin" --model "$moe" -s "the cat sat" --export "$tmp/moe-export" >/dev/null 2>"$tmp/moe.err" &&
    [ "$(sed -n 1p "$tmp/moe-export/layer0/experts.csv")" = "position,token,rank,expert,weight" ] &&
    [ ! -f "$tmp/moe-export/layer1/experts.csv" ] && [ -f "$tmp/moe-export/layer1/fc.csv" ] &&
    [ ! -f "$tmp/moe-export/layer0/fc.csv" ] &&
    awk -F, 'FNR == 1 { next }
        FILENAME ~ /router.csv$/ { n = split($0, v, ","); for (e = 2; e <= n; e++) p[FNR - 2, e - 2] = v[e]; rows = FNR - 1; next }
        { pos = $1 + 0; rank = $(NF - 2) + 0; ex = $(NF - 1) + 0; w = $NF + 0;
          sum[pos] += w; got[pos, rank] = ex; k[pos]++ }
        END {
            if (rows != 9) { print "router.csv rows " rows; exit 1 }
            for (i = 0; i < rows; i++) {
                if (k[i] != 2) { print "token " i ": " k[i] " experts"; exit 1 }
                if (sum[i] < 0.999999 || sum[i] > 1.000001) { print "token " i ": weights sum to " sum[i]; exit 1 }
                # (the two chosen are the router'"'"'s two likeliest, the likelier first)
                a = got[i, 0]; b = got[i, 1]
                if (p[i, a] + 0 < p[i, b] + 0) { print "token " i ": rank order"; exit 1 }
                for (e = 0; e < 6; e++) if (e != a && e != b && p[i, e] + 0 > p[i, b] + 0) { print "token " i ": expert " e " was likelier"; exit 1 }
            }
        }' "$tmp/moe-export/layer0/router.csv" "$tmp/moe-export/layer0/experts.csv" >"$tmp/moe.check" ||
    fail "--export experts.csv: $(cat "$tmp/moe.err" "$tmp/moe.check"; head -3 "$tmp/moe-export/layer0/experts.csv")"

# The expert knob: an expert switched off, said in the header, the next tokens changed; refused
# on a dense layer, past the experts, or leaving fewer on than a token needs.
count=$((count + 1))
"$bin" --model "$moe" -s "the cat sat" --print --stage next >"$tmp/moe-on" 2>/dev/null &&
    "$bin" --model "$moe" -s "the cat sat" --expert-off 0.0 --expert-off 2.5 --print --stage next \
        >"$tmp/moe-off" 2>"$tmp/moe.err" &&
    grep -qF "switched off (--expert-off, their router logits -inf): expert 0 of layer 0 expert 5 of layer 2" "$tmp/moe-off" &&
    [ "$(grep -c '^ *[0-9]' "$tmp/moe-on")" -eq 9 ] &&
    [ "$(grep '^ *[0-9]' "$tmp/moe-on")" != "$(grep '^ *[0-9]' "$tmp/moe-off")" ] ||
    fail "--expert-off: $(cat "$tmp/moe.err"; head -8 "$tmp/moe-off")"
count=$((count + 1))
expect 2 "layer 1 of qwen3-moe has one MLP, no experts" -- --model "$moe" -s x --expert-off 1.0 --print
expect 2 "qwen3-moe has layers 0 to 2 and experts 0 to 5" -- --model "$moe" -s x --expert-off 0.6 --print
expect 2 "layer 0 would keep 1 experts on; each token is sent to 2" -- --model "$moe" -s x \
    --expert-off 0.0 --expert-off 0.1 --expert-off 0.2 --expert-off 0.3 --expert-off 0.4 --print
expect 2 "--expert-off works with --model" -- --expert-off 0.1 --print

# Attention sinks (gpt-oss, issue 52): each row's share after the weights' tables, equal to 1
# minus the row's weights; sinks.csv; the sinks switched off, said and changing the next tokens.
oss="${top_srcdir:-.}/tests/fixtures/decoders/gpt-oss"
count=$((count + 1))
"$bin" --model "$oss" -s "the cat" --layer 1 --print --stage weights --format csv >"$tmp/oss.csv" \
    2>"$tmp/oss.err" &&
    "$bin" --model "$oss" -s "the cat" --layer 1 --print --stage weights >"$tmp/oss.out" 2>>"$tmp/oss.err" &&
    grep -qF "attention sinks: a learned logit per head in every softmax, dropped after it" "$tmp/oss.out" &&
    grep -qF "layer 1, the sinks' shares (heads x queries): the part of each row's softmax its head's sink took" "$tmp/oss.out" &&
    awk '/^  ·the  / && !done { n = 0; for (f = 2; f <= NF; f++) s += $f; row0 = s; done = 1 }
         /^  h0 / { share = $2 }
         END { if (share == "" || (1 - row0) - share > 0.0002 || share - (1 - row0) > 0.0002) {
                   print "head 0 row 0: weights sum " row0 ", sink " share; exit 1 } }' \
        "$tmp/oss.out" >"$tmp/oss.check" ||
    fail "--print --stage weights with sinks: $(cat "$tmp/oss.err" "$tmp/oss.check"; head -30 "$tmp/oss.out")"
count=$((count + 1))
"$bin" --model "$oss" -s "the cat" --export "$tmp/oss-export" >/dev/null 2>"$tmp/oss.err" &&
    [ "$(sed -n 1p "$tmp/oss-export/layer0/sinks.csv")" = "head,position,token,share" ] &&
    [ "$(wc -l <"$tmp/oss-export/layer3/sinks.csv")" -eq $((4 * 5 + 1)) ] &&
    [ -f "$tmp/oss-export/layer0/experts.csv" ] ||
    fail "--export sinks.csv: $(cat "$tmp/oss.err"; ls "$tmp/oss-export/layer0")"
count=$((count + 1))
"$bin" --model "$oss" -s "the cat sat" --print --stage next >"$tmp/oss-on" 2>/dev/null &&
    "$bin" --model "$oss" -s "the cat sat" --no-sinks --print --stage next >"$tmp/oss-off" \
        2>"$tmp/oss.err" &&
    grep -qF "attention sinks: a learned logit per head in every softmax, switched off (--no-sinks: their logits -inf)" "$tmp/oss-off" &&
    [ "$(grep '^ *[0-9]' "$tmp/oss-on")" != "$(grep '^ *[0-9]' "$tmp/oss-off")" ] &&
    "$bin" --model "$oss" -s "the cat" --no-sinks --print --stage weights 2>/dev/null |
        grep -qvF "the sinks' shares" &&
    ! "$bin" --model "$oss" -s "the cat" --no-sinks --print --stage weights 2>/dev/null |
        grep -qF "the sinks' shares" ||
    fail "--no-sinks: $(cat "$tmp/oss.err"; head -8 "$tmp/oss-off")"
count=$((count + 1))
expect 2 "--no-sinks: qwen3-moe has no attention sinks" -- --model "$moe" -s x --no-sinks --print
expect 2 "--no-sinks works with --model" -- --no-sinks --print

# Reliability round six (issue 60).
# 2. Writing with an expert switched off freed the knobs' copy twice (a release build aborted,
# exit 134): every way of writing with one off ends well, the text written.
minimoe="$src/samples/models/minimoe"
count=$((count + 1))
"$bin" --model "$minimoe" --expert-off 0.1 --generate 2 --print -s "cat map sun" >"$tmp/off-gen" 2>"$tmp/off-gen.err" &&
    grep -qF "wrote 2 tokens" "$tmp/off-gen.err" &&
    "$bin" --model "$minimoe" --expert-off 0.1 --expert-off 1.2 --generate 3 --export "$tmp/off-export" -s "cat map" \
        >/dev/null 2>>"$tmp/off-gen.err" && [ -f "$tmp/off-export/generated.csv" ] ||
    fail "--expert-off with --generate: $(cat "$tmp/off-gen.err")"
# 5. L.E in digits alone: "0." and "0. 1" were read as 0.0 and 0.1.
for bad in "0." "0. 1" " 0.1" "0.1 " "+0.1" "0.-1" "0..1" "1.2.3"; do
    expect 2 "--expert-off $bad: give a layer and an expert, from 0: --expert-off 3.7" -- --model "$minimoe" -s x --expert-off "$bad" --print
    expect 2 "--ablate $bad: give a layer and a head, from 0: --ablate 5.1" -- --model "$minimoe" -s x --ablate "$bad" --print
done
# 3. A FIFO where a model's file is meant blocked for ever (chat_template.jinja); one given as
# --model or --compare was "no such file".  (timeout: a hang fails the check instead of the run.)
mkdir -p "$tmp/fifo-model"
cp "$src/samples/models/minillama/"* "$tmp/fifo-model/"
mkfifo "$tmp/fifo-model/chat_template.jinja" "$tmp/fifo-weights"
count=$((count + 1))
timeout 60 "$bin" --model "$tmp/fifo-model" --chat hi --print >"$tmp/out" 2>"$tmp/err"
[ $? -eq 1 ] && grep -qF "$tmp/fifo-model/chat_template.jinja: is a FIFO, not a file" "$tmp/err" ||
    fail "a FIFO as chat_template.jinja: $(cat "$tmp/err")"
expect 1 "--model $tmp/fifo-weights: is a FIFO, not a model's folder or file" -- --model "$tmp/fifo-weights" --print
expect 1 "--compare $tmp/fifo-weights: is a FIFO, not a model's folder or file" -- --model "$src/samples/models/minillama" --compare "$tmp/fifo-weights" -s "cat" --print
rm "$tmp/fifo-model/chat_template.jinja"
mkfifo "$tmp/fifo-model/tokenizer_config.json"
count=$((count + 1))
timeout 60 "$bin" --model "$tmp/fifo-model" --chat hi --print >"$tmp/out" 2>"$tmp/err"
[ $? -eq 1 ] && grep -qF "tokenizer_config.json: is a FIFO, not a file" "$tmp/err" ||
    fail "a FIFO as tokenizer_config.json: $(cat "$tmp/err")"
rm "$tmp/fifo-model/tokenizer_config.json"
# --weights DIR's files are found, not named: a FIFO there is named too.
"$bin" --export "$tmp/fifo-w" >/dev/null 2>&1
rm "$tmp/fifo-w/W_query.weight.csv"
mkfifo "$tmp/fifo-w/W_query.weight.csv"
count=$((count + 1))
timeout 60 "$bin" --weights "$tmp/fifo-w" --print >"$tmp/out" 2>"$tmp/err"
[ $? -eq 1 ] && grep -qF "W_query.weight.csv: is a FIFO, not a file" "$tmp/err" ||
    fail "a FIFO in a --weights folder: $(cat "$tmp/err")"
# 9. A chat template of the wrong type was "has no chat template".
for v in 5 '{"a": 1}' '[{"name": "x"}]' true; do
    printf '{"chat_template": %s}' "$v" >"$tmp/fifo-model/tokenizer_config.json"
    expect 2 "fifo-model: tokenizer_config.json's chat_template is there, but " -- --model "$tmp/fifo-model" --chat hi --print
    grep -q "has no chat template" "$tmp/err" && fail "a chat_template of $v: $(cat "$tmp/err")"
done
rm "$tmp/fifo-model/tokenizer_config.json"
# 6. An Ollama params layer's counts are whole: "num_ctx": 2.5 was used as 2.
for bad in '"num_ctx":2.5' '"top_k":20.5'; do
    printf '{%s}' "$bad" >"$tmp/params-bad.json"
    bhex=$(sha256sum "$tmp/params-bad.json" | cut -c1-64)
    cp "$tmp/params-bad.json" "$tmp/ollama/blobs/sha256-$bhex"
    mkdir -p "$tmp/ollama/manifests/registry.ollama.ai/library/badparams"
    printf '{"schemaVersion":2,"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:%s","size":1},{"mediaType":"application/vnd.ollama.image.params","digest":"sha256:%s","size":1}]}' \
        "$real" "$bhex" >"$tmp/ollama/manifests/registry.ollama.ai/library/badparams/latest"
    OLLAMA_MODELS="$tmp/ollama" expect 1 "sha256-$bhex: $(echo "$bad" | cut -d'"' -f2): give a whole number from 0 to 16777216" -- --print --model badparams -s "the cat"
done
# 7. A quantization attnscope does not read is refused by name (awq was read as MXFP4).
mkdir -p "$tmp/awq"
cp "$src/tests/fixtures/decoders/gpt-oss-mxfp4/"* "$tmp/awq/"
sed 's/"quant_method": "mxfp4"/"quant_method": "awq"/' "$src/tests/fixtures/decoders/gpt-oss-mxfp4/config.json" >"$tmp/awq/config.json"
expect 1 "awq/config.json: quantization_config's quant_method 'awq' is not one attnscope reads" -- --model "$tmp/awq" -s a --print
sed 's/"quant_method": "mxfp4"/"quant_method": 4/' "$src/tests/fixtures/decoders/gpt-oss-mxfp4/config.json" >"$tmp/awq/config.json"
expect 1 "awq/config.json: quantization_config: give an object with a quant_method" -- --model "$tmp/awq" -s a --print
# 10. A lesson's --compare model not found is the comparison's, not $ATTNSCOPE_MODEL's to set.
printf 'title: t\noptions: --model %s --compare %s/nowhere -s "cat map"\n\nstep: one\nstage: weights\n\nText.\n' \
    "$src/samples/models/minillama" "$tmp" >"$tmp/compare-missing.walk"
ATTNSCOPE_MODEL="$src/samples/models/minigpt" expect 1 "compare-missing.walk:2: --compare $tmp/nowhere: the model to compare with is not on this machine" -- --walkthrough "$tmp/compare-missing.walk" --print
grep -q "ATTNSCOPE_MODEL" "$tmp/err" && fail "a lesson's missing --compare model: $(cat "$tmp/err")"

count=$((count + 1))
"$bin" --help | grep -q -- "--export DIR" || fail "--help"
"$bin" --version | grep -q "^attnscope [0-9]" || fail "--version"

echo "$count checks, $failures failed"
[ "$failures" -eq 0 ]
