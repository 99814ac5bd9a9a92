#!/bin/sh
# stress.sh: 10,000 random keystrokes and 100 resizes, seeded and so
# reproducible, sent to attnscope in tmux as fast as tmux takes them.  At
# the end attnscope must still be running, answer a key (the help screen),
# quit on q and give the terminal back as it was.
#
#     STRESS_SEED=N STRESS_KEYS=N tests/stress.sh    (defaults 1 and 10000)
#
# The keys are every key attnscope has but q: stages, cursor, heads, every
# knob, the editor (with letters to type), exports, the walkthrough picker,
# help, presentation mode.  The random numbers are Park and Miller's minimal
# standard generator, so every awk draws the same sequence.  The keys and
# the sizes are reproducible; how tmux interleaves them with attnscope's
# frames is not (a key that arrives while the window is too small to draw
# is ignored, as it would be for a user).

name=stress
. "${top_srcdir:-.}/tests/tmuxlib.sh"

seed=${STRESS_SEED:-1}
total=${STRESS_KEYS:-10000}
batch=50

# The plan: one line per tmux command, "keys K1 K2 ..." or "resize W H".
awk -v seed="$seed" -v total="$total" -v batch="$batch" '
function draw(n) { x = (x * 16807) % 2147483647; return x % n }
BEGIN {
    x = seed % 2147483646 + 1
    n = split("Space BSpace Up Down Left Right Home End PPage NPage Tab BTab Enter Escape " \
              "0 1 2 3 4 5 6 7 8 9 n p g M e v V d D h H s S o O r R t m / > < P k b x X w z ? " \
              "a c f i j l u y A E G", pool, " ")
    line = ""
    for (k = 1; k <= total; k++) {
        line = line " " pool[draw(n) + 1]
        if (k % batch == 0 || k == total) { print "keys" line; line = "" }
        if (k % 100 == 0) print "resize", 10 + draw(190), 5 + draw(56)
    }
}' >"$tmp/plan"

start 100 30
pid=$(pane_attnscope)
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$pid/status" 2>/dev/null; }
rss_before=$(rss)
began=$(date +%s)
# (sent is tmuxlib's count of the keys sent; here a flood's escapes may merge, so it is not
# counted: drained waits for a key sent last to be read instead)
while read -r what a b; do
    case $what in
    keys) # shellcheck disable=SC2086
        t send-keys $a $b ;;
    resize) t resize-window -x "$a" -y "$b" ;;
    esac
done <"$tmp/plan"
sent_at=$(date +%s)
checks=$((checks + 1))
[ "$(pane_attnscope)" = "$pid" ] || fail "attnscope did not survive $total keys (seed $seed)"
resize 100 30
# tmux takes keys faster than attnscope draws them, most of all under the
# sanitizers on a loaded machine: wait until it has read every queued key (a
# last key it acknowledges), up to 10 minutes (a hang guard), before judging the screen.
checks=$((checks + 1))
drained 600 || fail "attnscope had not read $total keys 10 minutes after they were sent (seed $seed)"
answered=$(($(date +%s) - sent_at))
rss_after=$(rss)
# Whatever the random keys left open (editor, picker, help, a prompt), three
# Escapes close it; then ? must show the help, Escape close it, q quit.
keys Escape Escape Escape
checks=$((checks + 1))
if ! drained 30 || screen | grep -q "previous stage"; then
    fail "after $total keys three Escapes do not bring back the view (seed $seed): $(screen | head -5)"
fi
keys ?
checks=$((checks + 1))
wait_screen "previous stage" 600 || fail "after $total keys attnscope does not answer ? (seed $seed): $(screen | head -5)"
keys Escape
checks=$((checks + 1))
wait_gone "previous stage" 600 || fail "after $total keys Escape does not close the help (seed $seed)"
keys q
restored "after $total keys (seed $seed)" 0 600
echo "$total keys and $((total / 100)) resizes sent in $((sent_at - began)) s, all read ${answered} s later (seed $seed);" \
    "resident memory ${rss_before:-?} kB before, ${rss_after:-?} kB after"

echo "$checks checks, $failures failed"
[ "$failures" -eq 0 ]
