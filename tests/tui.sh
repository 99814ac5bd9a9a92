#!/bin/sh
# tui.sh: the interactive view end to end, in a real terminal.
#
# Each scenario sends keys to attnscope in tmux (tests/tmuxlib.sh) and
# compares `capture-pane -p` with a golden screen in tests/golden/screens/
# (GENERATE=1 rewrites them: review before committing).  It also checks
# that quitting and signals give the terminal back as it was.

name=tui
. "${top_srcdir:-.}/tests/tmuxlib.sh"

# The same screens on every machine: no downloaded model (GPT-2 small) is found here, so the
# lessons written for it are skipped and the picker says they need it.
mkdir -p "$tmp/home"
HOME="$tmp/home"
export HOME
unset ATTNSCOPE_MODEL HF_HUB_CACHE HF_HOME XDG_CACHE_HOME

# readme_capture ID SNAP: README.md's capture marked "<!-- tui-capture ID:" is the
# screen snapped last under a title starting with SNAP.
readme_capture() {
    checks=$((checks + 1))
    awk -v id="$1" '$0 ~ "^<!-- tui-capture " id ":" { on = 1; next }
        on && /^```$/ { if (inside) exit; inside = 1; next } on && inside { print }' \
        "${top_srcdir:-.}/README.md" >"$tmp/readme-screen"
    sed -n "/^=== $2/,\$p" "$tmp/capture" | sed '1d' >"$tmp/actual-screen"
    [ -s "$tmp/readme-screen" ] || fail "README.md has no capture marked tui-capture $1"
    cmp -s "$tmp/readme-screen" "$tmp/actual-screen" ||
        fail "README.md's capture $1 differs from the screen: $(diff "$tmp/readme-screen" "$tmp/actual-screen" | head -10)"
}

# 1. Start-up on the book's sentence: the output of MultiHeadAttention.
start 100 30
snap "start-up"
finish startup

# 2. Every stage, in order, with Space, then back with p and Backspace.
start 100 30
keys 1
snap "1 embeddings"
for name in "2 Q K V" "3 scores" "4 mask" "5 scaled" "6 weights" "7 dropout" "8 context" "9 concat" "0 output"; do
    keys Space
    snap "$name"
done
keys p BSpace
snap "back to 8 context"
finish stages

# 3. The inspector follows the cursor.  The first screen is the README's.
start 100 30
keys 6 Down Down Right
snap "weights, cursor on starts/journey"
readme_capture toy "weights, cursor on starts"
keys 3 Up
snap "scores, cursor on journey/journey"
keys 8 Right
snap "context, column 1"
finish inspector

# 4. Heads and the all-heads grid.
start 100 30
keys 6 Tab
snap "head 1"
keys g
snap "grid of heads"
keys h
snap "three heads"
finish heads

# 5. Breaking things: the mask off, scaling off, dropout on.
start 100 30
keys 6 m
snap "mask off: the future is seen"
keys m / d d
snap "scaling off, d_k 3"
keys / 7 o o o o o
snap "dropout 0.5"
keys r
snap "the next mask"
keys M
snap "the mask itself"
finish knobs

# 6. Editing the sentence.
start 100 30
keys e C-w C-w
keys -l " giant leap!"
snap "editing"
keys Enter 1
snap "new sentence, made-up words marked"
keys e C-u Enter
snap "an empty sentence is refused"
finish edit

# 7. Resizing.
start 100 30
keys 6
resize 80 24
snap "80x24"
resize 40 12
snap "40x12: too small"
resize 120 32
snap "120x32: inspector at the side"
finish resize

# 8. Help.
start 100 30
keys ?
snap "help"
keys Escape
snap "closed"
finish help

# 9. Export.
start 100 30
keys 6 x
snap "export one stage"
keys X
snap "export everything"
finish export
checks=$((checks + 1))
[ -f "$tmp/attnscope-export/weights.h1.csv" ] && [ -f "$tmp/attnscope-export/out_proj.bias.csv" ] ||
    fail "export: files missing in $tmp/attnscope-export"

# 10. Every shipped walkthrough played to the end; the last step's screen is golden.
for walk in "$srcdir"/samples/walkthroughs/*.walk; do
    name=$(basename "$walk" .walk)
    steps=$(grep -c '^step:' "$walk")
    # A lesson for GPT-2 small runs where the model is downloaded (cli.sh checks what it says).
    if ! "$bin" --walkthrough "$walk" --print >/dev/null 2>"$tmp/absent" &&
        grep -q "is not on this machine" "$tmp/absent"; then
        echo "skipped $name: its model is not on this machine"
        continue
    fi
    start 100 30 --walkthrough "$walk"
    snap "$name: step 1"
    step=1
    while [ $step -lt "$steps" ]; do
        # (one at a time: a key pressed while a step is built is dropped, as the view says;
        # settle counts with i of its own)
        keys Space
        settle
        step=$((step + 1))
    done
    snap "$name: step $steps"
    keys Space
    snap "$name: after the last step"
    checks=$((checks + 1))
    grep -q "step $steps of $steps" "$tmp/capture" && grep -q "the end of" "$tmp/capture" ||
        fail "walkthrough $name did not reach its last step"
    finish "walk-$name"
done

# 11. Leaving a walkthrough to explore, and coming back; the picker; presentation mode.
start 100 30 --walkthrough "$srcdir/samples/walkthroughs/03-causal-and-dropout.walk"
keys Space m
snap "exploring: the mask switched off"
keys Enter
snap "back to step 2"
keys z
snap "presentation mode"
keys z w
snap "the picker"
keys Down Enter
snap "walkthrough 2 from the picker"
finish walk-explore

# 11b. A clicker walks a trained model's lesson over its own screens, each centred without bars.
start 100 30 --present --walkthrough "$srcdir/samples/walkthroughs/08-minigpt-heads.walk"
keys NPage
snap "presentation mode: the map (step 2)"
keys NPage
snap "presentation mode: the sentence view (step 3)"
finish walk-present-model

# 12. Quitting gives the terminal back.
start 100 30
keys 6 q
restored "q" 0

# 13. So do SIGTERM, SIGINT and SIGHUP, and the exit status tells which.
for sig in TERM INT HUP; do
    start 100 30
    keys 6
    screen >/dev/null
    # Only the attnscope in this scenario's pane: a child of the pane's shell.
    signal_attnscope "$sig" || fail "SIG$sig: no attnscope to signal"
    case $sig in TERM) code=143 ;; INT) code=130 ;; HUP) code=129 ;; esac
    restored "SIG$sig" "$code"
done

# 14. A terminal that cannot move the cursor is refused with a message.
checks=$((checks + 1))
scenario=$((scenario + 1))
sock="$base-$scenario"
t new -d -x 100 -y 30 "env TERM=dumb sh -c '\"$bin\" 2>$tmp/dumb; echo \$? > $tmp/dumb.rc; sleep 30'"
i=0
while [ $i -lt 100 ] && [ ! -s "$tmp/dumb.rc" ]; do sleep 0.05; i=$((i + 1)); done
[ "$(cat "$tmp/dumb.rc" 2>/dev/null)" = 1 ] && grep -q "cannot move the cursor; use --print" "$tmp/dumb" ||
    fail "TERM=dumb: exit $(cat "$tmp/dumb.rc" 2>/dev/null), message: $(cat "$tmp/dumb" 2>/dev/null)"
t kill-server 2>/dev/null

# 15. Without a terminal: a clear message pointing at --print and --export.
checks=$((checks + 1))
msg=$(echo | "$bin" 2>&1 >/dev/null)
rc=$?
[ $rc -eq 1 ] && printf '%s' "$msg" | grep -q -- "--print" && printf '%s' "$msg" | grep -q -- "--export" ||
    fail "no terminal: exit $rc, message: $msg"

# 16. A trained model (--model: the tiny GPT-2 of tests/fixtures/gpt2/tiny):
# its name and layer in the bar, the block's input, a layer's weights, a
# query's products with c_attn's weights, and a layer norm's cell.
printf '%s\n' "The cat sat on the mat." >"$tmp/say.txt"
start 100 30 --model "$srcdir/tests/fixtures/gpt2/tiny" -f say.txt
snap "model: tokens and embeddings"
keys 6 .
snap "model: layer 1, weights"
keys 2 Tab
snap "model: layer 1, Q K V of head 1"
keys 0 Space Space
snap "model: layer 1, ln_2 (the bar follows the stage)"
keys L Tab
snap "model: the map, previous-token weights"
keys Escape T Right Right Right
snap "model: the sentence view, what '·on' attends to"
keys Escape N
snap "model: the predictions and the logit lens"
# The view packs the weights on a thread of its own and takes the packs over
# between keys: the keylog says "settled" once it has (a state to wait for).
i=0
until grep -q '^settled$' "$tmp/keylog" 2>/dev/null; do
    [ $i -ge 2400 ] && fail "model: the view never said it had taken its packed weights over"
    sleep 0.05
    i=$((i + 1))
done
keys Down Up
snap "model: the predictions once the packs are taken over: the same screen"
finish model

# 17. minigpt, the model that ships: the README's first screen is its map's
# heatmaps (a previous-token head in layer 0, induction heads in layer 1);
# then a lesson step on it, and the sentence view of its induction head.
printf '%s\n' "cat map sun red fox cat map sun red fox" >"$tmp/repeat.txt"
start 100 34 --mono --model "$srcdir/samples/models/minigpt" --bos -f repeat.txt
keys L Tab Tab h # (h reaches the heatmaps from any measure: L remembers the last one)
snap "minigpt: the map's heatmaps"
readme_capture minigpt "minigpt: the map's heatmaps"
keys Escape T . Tab Right Right Right Right Right Right Right
snap "minigpt: the sentence view, induction head 1.1 at the second map"
finish minigpt

# 18. The lecture notes' MultiHeadAttention: a layer per head with a bias, no
# mask, and dropout on the output (7 goes there), a dropped value explained.
printf '%s\n' "row1 row2 row3" >"$tmp/rows.txt"
start 100 30 -e "$srcdir/samples/dry-run-6d.csv" -f rows.txt --variant notes --heads 2 --dropout 0.5
keys 2
snap "notes: Q K V of head 0, linear_Qs.0"
keys 6
snap "notes: no mask, row1 sees row3"
keys 7
snap "notes: dropout on the output, a dropped value"
keys Right Right Right Right
snap "notes: a kept value, doubled"
finish notes

# 19. Cross-attention: two sentences on the bar, the source's own stage, Q K V
# rows pairing a target with a source token, T x S weights, the mask refused,
# the source edited (E).
printf '%s\n' "Kannst du mir helfen diesen Satz zu übersetzen" >"$tmp/de.txt"
printf '%s\n' "Can you help me translate this sentence" >"$tmp/en.txt"
start 100 30 -e "$srcdir/samples/translate/en.csv" --source-embeddings "$srcdir/samples/translate/de.csv" -f en.txt --source-file de.txt --weights "$srcdir/samples/translate/same-space"
keys Space
snap "cross: the source sentence"
keys 2
snap "cross: Q from the target, K and V from the source"
keys 6 Down Down Right Right Right
snap "cross: weights, help on helfen"
keys T
snap "cross: the sentence view shades the source"
keys Escape m
snap "cross: no mask across sentences"
keys E C-w C-w C-w
keys -l "Satz"
keys Enter
snap "cross: the source edited"
finish cross

# 20. A long computation does not take the keys away: exporting every layer
# of a 300-layer model (random weights, tests/gpt2-folder) shows a busy line
# with the layer it is at; Esc stops it (nothing written, the view as it
# was), and q during a second export stops it and quits, leaving nothing of
# the export behind.  Each step waits for a state on the screen.
"${top_builddir:-.}/tests/gpt2-folder" "$tmp/deep" 300 2 16 64 317 >/dev/null
cp "$srcdir/tests/fixtures/gpt2/tiny/vocab.json" "$srcdir/tests/fixtures/gpt2/tiny/merges.txt" "$tmp/deep/"
start 100 30 --model "$tmp/deep" -f say.txt
keys X
checks=$((checks + 1))
if ! wait_screen "exporting: [0-9]* of 300. Esc stops" 2400; then
    fail "busy: no busy line while exporting 300 layers:"
    screen
fi
t send-keys Escape
checks=$((checks + 1))
wait_screen "export stopped at layer [0-9]* of 300: nothing was written" 2400 ||
    { fail "busy: Esc did not stop the export:"; screen; }
# (attnscope-export/ holds earlier scenarios' files: no layer of this model, no staging folder.)
left() { ls -A "$tmp" "$tmp/attnscope-export" 2>/dev/null | grep -E '^\.attnscope-export|^layer'; }
[ -z "$(left)" ] || fail "busy: a stopped export left $(left)"
t send-keys X
wait_screen "exporting: [0-9]* of 300. Esc stops" 2400 || fail "busy: no busy line the second time"
t send-keys q
restored "busy: q while exporting" 0 2400
[ -z "$(left)" ] || fail "busy: quitting during an export left $(left)"

# 20b. Keys typed while a job runs are not lost (issue 50, item 4: four Spaces on a slow
# model's lesson advanced three stages): they are handled after it, in order.  A key typed
# during the export, then Esc: the export stops, and the key then takes the view to its stage.
start 100 30 --model "$tmp/deep" -f say.txt
keys X
checks=$((checks + 1))
wait_screen "exporting: [0-9]* of 300. Esc stops" 2400 || { fail "held: no busy line:"; screen; }
t send-keys 6
t send-keys Escape
checks=$((checks + 1))
wait_screen "Layer 0: Attention weights" 2400 ||
    { fail "held: the key typed during the export was dropped:"; screen; }
t send-keys q
restored "held: q after the held key" 0 2400

# 20c. By default the writing stops at the end token the model's files name
# (minigpt's config.json: <|endoftext|>, its likeliest after this text), and
# the view says which (issue 50, item 7).
start 100 30 --model "$srcdir/samples/models/minigpt" --bos -f repeat.txt --generate 3
checks=$((checks + 1))
wait_screen "the end token (config.json's eos_token_id)" 2400 ||
    { fail "write: the model's own end token did not stop it, or was not said:"; screen; }
t send-keys q
restored "write: q after the end token" 0 2400

# 20d. An Ollama model's params are said on screen when the view opens (issue 50, item 9).
mkdir -p "$tmp/ollama/manifests/registry.ollama.ai/library/withparams" "$tmp/ollama/blobs"
printf '{"temperature":0.6,"top_k":20}' >"$tmp/ollama/params.json"
ohex=$(sha256sum "$srcdir/tests/fixtures/decoders/qwen3-tok-gguf/model.gguf" | cut -c1-64)
phex=$(sha256sum "$tmp/ollama/params.json" | cut -c1-64)
cp "$srcdir/tests/fixtures/decoders/qwen3-tok-gguf/model.gguf" "$tmp/ollama/blobs/sha256-$ohex"
cp "$tmp/ollama/params.json" "$tmp/ollama/blobs/sha256-$phex"
printf '{"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:%s"},{"mediaType":"application/vnd.ollama.image.params","digest":"sha256:%s"}]}' \
    "$ohex" "$phex" >"$tmp/ollama/manifests/registry.ollama.ai/library/withparams/latest"
TUI_ENV="LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color OLLAMA_MODELS=$tmp/ollama" \
    start 120 30 --model withparams -s cat
checks=$((checks + 1))
wait_screen "Ollama's params for withparams:latest: temperature 0.6 top_k 20" 2400 ||
    { fail "ollama: the params were not said:"; screen; }
checks=$((checks + 1))
wait_screen "j:sample T 0.6 y:top-k 20" 2400 || { fail "ollama: the knobs are not the params':"; screen; }
t send-keys q
restored "ollama: q" 0 2400

# 20f. A sliding model's full layer titles its mask so, beside the sliding one's (issue 50,
# item 12): minigemma's layer 1 is full, its layer 0 slides.
start 120 30 --model "$srcdir/samples/models/minigemma" -s cat --stage mask --head 1.0
checks=$((checks + 1))
wait_screen "Layer 1: Causal mask, a full layer: every key before" 2400 ||
    { fail "full layer: the mask's title:"; screen; }
t send-keys ,
checks=$((checks + 1))
wait_screen "Layer 0: Sliding-window mask: the last 4 keys" 2400 || { fail "full layer: layer 0's title:"; screen; }
t send-keys q
restored "full layer: q" 0 2400

# 20e. :chat in the view (issue 50, item 8): the message in the model's chat template
# becomes the text, said with the template's family.
mkdir -p "$tmp/chat"
for f in config.json model.safetensors tokenizer.json; do cp "$srcdir/samples/models/minillama/$f" "$tmp/chat/"; done
cp "$srcdir/tests/fixtures/chat/qwen3.jinja" "$tmp/chat/chat_template.jinja"
start 120 30 --model "$tmp/chat" -s cat
t send-keys :
t send-keys 'chat cat map' Enter
checks=$((checks + 1))
wait_screen "chat: the message in the ChatML chat template (chat_template.jinja)" 2400 ||
    { fail "chat: :chat was not said:"; screen; }
checks=$((checks + 1))
wait_screen "sentence: < | i m _ s t art | > us e r" 2400 || { fail "chat: the text is not the turn:"; screen; }
t send-keys q
restored "chat: q" 0 2400

# 20f. Two models side by side (issue 53): --compare opens on the difference of the stage,
# C goes to the first's numbers, the second's and back; the map ranks the heads by their
# change, the predictions give each position's divergence; :compare alone closes the second,
# :compare PATH opens it again.
start 100 30 --model "$srcdir/samples/models/minillama" --compare "$srcdir/samples/models/minillama-q4" \
    --stage weights --head 1.3
snap "the difference of head 1.3's weights"
keys C
snap "C: the first's"
keys C
snap "C: the second's"
keys C L
snap "L: how much each head changed"
keys N
snap "N: the next tokens' divergence"
keys Escape :
keys -l "compare"
keys Enter
snap ":compare: closed"
# (a path longer than a knob's value: the line once kept 63 bytes of it)
long="$tmp/a-folder-whose-name-makes-the-typed-path-longer-than-a-knob-value"
mkdir -p "$long" && ln -s "$srcdir/samples/models/minillama-q4" "$long/minillama-q4"
keys :
keys -l "compare $long/minillama-q4"
keys Enter
snap ":compare minillama-q4: open again"
# x with two models: the stage shown of both and their difference, as --export --compare writes it.
keys x
settle
checks=$((checks + 1))
[ -f "$tmp/attnscope-export/layer1/weights.h3.csv" ] &&
    [ -f "$tmp/attnscope-export/compare/layer1/weights.h3.csv" ] &&
    [ -f "$tmp/attnscope-export/difference/layer1/weights.h3.csv" ] ||
    { fail "compare: x did not write the three:"; screen; }
finish compare

# 20g. The header's next token is the side shown's (issue 62, item 3): minillama-tuned predicts
# ·map where minillama says <|endoftext|>; the difference names both, first | second.
start 100 30 --model "$srcdir/samples/models/minillama" --compare "$srcdir/samples/models/minillama-tuned" \
    --side second
checks=$((checks + 1))
wait_text "next: ·map 100%" || { fail "compare: --side second's header is not the second's:"; screen; }
keys C
checks=$((checks + 1))
wait_text "next: <|endoftext|> 50% | ·map 100%" || { fail "compare: the difference's header:"; screen; }
keys C
checks=$((checks + 1))
wait_gone "50% | ·map" && wait_text "next: <|endoftext|> 50%" ||
    { fail "compare: the first's header:"; screen; }
t send-keys q
restored "compare header: q" 0 2400

# 21. A model writing in a real terminal: --generate opens on the text written,
# A keeps writing a token a frame until Esc (waited for on the screen, a
# state), what was written stays, Backspace takes a token back, q restores
# the terminal.  (--eos none: the book's generate, which writes on.)
start 100 30 --model "$srcdir/samples/models/minigpt" --bos -f repeat.txt --generate 3 --eos none
checks=$((checks + 1))
wait_screen "(14 of 64 tokens)" || { fail "write: --generate 3 did not open on 14 tokens:"; screen; }
t send-keys A
checks=$((checks + 1))
wait_screen "writing: [0-9]* tokens written; any key stops" 2400 ||
    { fail "write: A did not keep writing:"; screen; }
t send-keys Escape
checks=$((checks + 1))
wait_screen "writing stopped: [0-9]* tokens written" 2400 || { fail "write: Esc did not stop it:"; screen; }
written=$(t capture-pane -p | sed -n 's/.*writing stopped: \([0-9]*\) tokens written.*/\1/p')
t send-keys BSpace
checks=$((checks + 1))
wait_screen "taken back: $((written - 1)) written" 2400 || { fail "write: Backspace after $written:"; screen; }
t send-keys q
restored "write: q after writing" 0 2400

# 21b. A long --generate in the view (issue 48): the view draws as it writes, and Ctrl-C
# stops the writing (not attnscope), the view staying on what was written; q restores.
# (SIGINT to attnscope alone: in the pane's process group it would end the test's sh too,
# where a terminal's interactive shell ignores it.)
start 100 30 --model "$srcdir/samples/models/minigpt" --bos -f repeat.txt --generate 100000 --eos none
checks=$((checks + 1))
wait_screen "writing (--generate): [0-9]* written, [0-9]* to go" 2400 ||
    { fail "write: --generate 100000 did not write as the view drew:"; screen; }
signal_attnscope INT
checks=$((checks + 1))
wait_screen "writing stopped: [0-9]* tokens written" 2400 || { fail "write: Ctrl-C did not stop it:"; screen; }
checks=$((checks + 1))
t capture-pane -p | grep -q "sentence:" || { fail "write: Ctrl-C ended the view:"; screen; }
t send-keys q
restored "write: q after Ctrl-C stopped the writing" 0 2400

# 22. A model file cut short while the view reads it (its weights mapped from
# the page cache, then packed): recomputing neither crashes nor hangs; the
# view goes on (what it reads is its own by then) or says which file shrank,
# and q gives the terminal back.
rm -rf "$tmp/cut" && cp -r "$srcdir/samples/models/minillama" "$tmp/cut"
start 100 30 --model "$tmp/cut"
truncate -s 100 "$tmp/cut/model.safetensors"
keys m m
settle
checks=$((checks + 1))
t capture-pane -p | grep -q "sentence:" || { fail "cut: the view is gone after the file shrank:"; screen; }
keys q
restored "cut: q after the file shrank" 0

echo "$checks checks, $failures failed"
[ "$failures" -eq 0 ]
