/*
 * keys.c: fuzzes the interactive view without a terminal.  Each input byte
 * is a key, pressed on the book's sentence, and every key is followed by a
 * frame drawn at the current size, as the TUI does:
 *
 *     0x00-0x7F   that character (letters are the knobs, digits jump, ...)
 *     0x80-0x8D   the arrows, Home, End, PgUp, PgDn, Backspace, Delete,
 *                 Enter, Esc, Tab and Shift-Tab
 *     0xF0 W H    a resize to (1 + W % 160) x (1 + H % 60)
 *     0xF1 X Y    a mouse click at (X, Y)
 *     0xF2 W W H H  a resize to (1 + WW % 2048) x (1 + HH % 512), 16-bit big-endian:
 *                 the wide terminals of a projector, and past them
 *     others      a non-ASCII character (U+00A0 + byte), for the editor
 *
 * An input whose first byte is 0xF3 starts across sentences instead: the
 * book's sentence as the source of cross-attention (--source), "with one
 * step" as the target, so E, T and every stage meet two sentences.
 *
 * Exports go to a temporary folder made once (in /dev/shm when there is
 * one), and fsync() does nothing here: a fuzzer looks for wrong behaviour,
 * not durability, and a disk's flushes made it run at 11 inputs a second.
 * Inputs are cut at 512 keys.
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "attnscope/text/vocab.h"
#include "fuzz.h"
#include "render/grid.h"
#include "front/app/app.h"

#define MAX_KEYS 512

static struct vocab book;
static char export_dir[64];

/* Replaces the C library's for this program (see above). */
int
fsync(int fd)
{
    (void)fd;
    return 0;
}

static void
setup_once(void)
{
    if (book.count != 0)
        return;
    snprintf(export_dir, sizeof export_dir, "%s/attnscope-fuzz-keys-XXXXXX",
             access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    if (vocab_builtin(&book, NULL) != ATTN_OK || mkdtemp(export_dir) == NULL)
        abort();
}

/* Whether a frame of w x h can be drawn (the TUI stops when one cannot). */
static bool
resize(struct grid *g, int w, int h)
{
    grid_destroy(g);
    return grid_create(g, w, h) == 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct attention_config cfg;
    struct pipeline_source src = { .sentence = "Your journey starts with one step" };
    struct attn_error err;
    struct app a;
    struct grid g = { 0 };

    setup_once();
    src.vocab = &book;
    attention_config_init(&cfg);
    if (size > 0 && data[0] == 0xF3) {
        src.source = src.sentence;
        src.sentence = "with one step";
        cfg.cross = true;
        attention_config_set_variant(&cfg, cfg.variant);
        data++;
        size--;
    }
    if (app_init(&a, &cfg, &src, NULL, &err) != ATTN_OK)
        abort();
    a.export_dir = export_dir;
    if (!resize(&g, 100, 30))
        abort();
    for (size_t i = 0; i < size && i < MAX_KEYS && !a.quit; i++) {
        uint8_t b = data[i];
        if (b == 0xF0 && i + 2 < size) {
            if (!resize(&g, 1 + data[i + 1] % 160, 1 + data[i + 2] % 60))
                break;
            i += 2;
        } else if (b == 0xF2 && i + 4 < size) {
            if (!resize(&g, 1 + ((data[i + 1] << 8) | data[i + 2]) % 2048,
                        1 + ((data[i + 3] << 8) | data[i + 4]) % 512))
                break;
            i += 4;
        } else if (b == 0xF1 && i + 2 < size) {
            app_click(&a, data[i + 1], data[i + 2]);
            i += 2;
        } else if (b < 0x80) {
            app_key(&a, b);
        } else if (b <= 0x8D) {
            app_key(&a, APP_KEY_UP + (b - 0x80));
        } else {
            app_key(&a, 0xA0 + b);
        }
        /* Keep the model small enough to stay fast; the limits are tested elsewhere. */
        if (!fuzz_small_pair(&a.cfg, a.sentence, a.source))
            break;
        app_render(&a, &g);
    }
    grid_destroy(&g);
    app_destroy(&a);
    return 0;
}
