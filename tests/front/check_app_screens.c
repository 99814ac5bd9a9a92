/*
 * check_app_screens.c: the interactive view on the book's sentence past its
 * stage keys: editing the sentence (and across sentences), pastes, hostile
 * edits and knobs, exports, and the screens and lessons as a user meets
 * them (the clicker, the keys lessons quote, the help, the sentence view,
 * a stale narration), driven without a terminal.
 */
#include "config.h"

#include "app_harness.h"

/*
 * Cross-attention in the view: E edits the source (e the target), a bad
 * source keeps the last good one, m cannot add a mask, v skips simple.
 */
START_TEST(cross_attention_keys)
{
    struct attention_config cfg;
    struct attn_error err;
    struct pipeline_source src = {
        .sentence = "with one step",
        .vocab = &book,
        .source = "Your journey starts",
    };

    app_destroy(&a); /* the setup's, without a source */
    attention_config_init(&cfg);
    cfg.cross = true;
    attention_config_set_variant(&cfg, ATTN_MHA);
    ck_assert_msg(app_init(&a, &cfg, &src, NULL, &err) == ATTN_OK, "%s", err.msg);
    ck_assert_int_eq(a.pipe.st.nq, 3);
    ck_assert_int_eq(a.pipe.st.nk, 3);
    keys("E");
    ck_assert(a.view.editing && a.view.editing_source);
    ck_assert_str_eq(a.edit, "Your journey starts");
    type(" with one step");
    app_key(&a, APP_KEY_ENTER);
    ck_assert_str_eq(a.source, "Your journey starts with one step");
    ck_assert_int_eq(a.pipe.st.nk, 6);
    ck_assert_int_eq(a.pipe.st.nq, 3); /* the target is as it was */
    ck_assert_ptr_nonnull(strstr(a.message, "the source has 6 tokens"));
    /* An empty source is refused; the one shown stays. */
    keys("E");
    app_key(&a, APP_KEY_CTRL('u'));
    app_key(&a, APP_KEY_ENTER);
    ck_assert(a.view.message_is_error);
    ck_assert_ptr_nonnull(strstr(a.message, "--source: the sentence is empty"));
    ck_assert_str_eq(a.source, "Your journey starts with one step");
    ck_assert_int_eq(a.pipe.st.nk, 6);
    /* The editor stays open on what was refused (issue 23, item 13); Esc leaves it. */
    ck_assert(a.view.editing && a.view.editing_source);
    app_key(&a, APP_KEY_ESCAPE);
    keys("e");
    ck_assert(a.view.editing && !a.view.editing_source);
    ck_assert_str_eq(a.edit, "with one step");
    app_key(&a, APP_KEY_ESCAPE);
    keys("m");
    ck_assert(a.view.message_is_error);
    ck_assert_ptr_nonnull(strstr(a.message, "across sentences there is no mask"));
    ck_assert_int_eq(a.cfg.mask, ATTN_MASK_NONE);
    for (int i = 0; i < 10; i++) {
        keys("v");
        ck_assert_int_ne(a.cfg.variant, ATTN_SIMPLE);
        ck_assert_int_eq(a.cfg.mask, ATTN_MASK_NONE);
        ck_assert_int_eq(a.pipe.st.nk, 6);
    }
}
END_TEST

/* Without a source, E says what it is for. */
START_TEST(source_key_without_a_source)
{
    keys("E");
    ck_assert(!a.view.editing);
    ck_assert_ptr_nonnull(strstr(a.message, "E edits the source sentence of cross-attention"));
}
END_TEST

/* A paste is sentence text, never keys (bracketed paste, W4). */
START_TEST(pastes_are_text)
{
    static const char p1[] = "hello world\r\nXq\x1b[2J\xe2\x80\xae!";

    /* Outside the editor: the editor opens holding the paste; nothing runs as a key. */
    app_paste(&a, p1, sizeof p1 - 1);
    ck_assert(a.view.editing);
    ck_assert(!a.quit);
    ck_assert_str_eq(a.edit, "hello world Xq[2J!");
    ck_assert_ptr_nonnull(strstr(a.message, "Enter applies"));
    ck_assert_str_eq(a.sentence, "Your journey starts with one step");
    /* In the editor: at the cursor. */
    app_key(&a, APP_KEY_HOME);
    app_paste(&a, "big ", 4);
    ck_assert_str_eq(a.edit, "big hello world Xq[2J!");
    app_key(&a, APP_KEY_ENTER);
    ck_assert_str_eq(a.sentence, "big hello world Xq[2J!");
    /* Esc after a paste keeps the old sentence. */
    app_paste(&a, "q", 1);
    app_key(&a, APP_KEY_ESCAPE);
    ck_assert(!a.quit);
    ck_assert_str_eq(a.sentence, "big hello world Xq[2J!");
}
END_TEST

START_TEST(editing_the_sentence)
{
    keys("e");
    ck_assert(a.view.editing);
    app_key(&a, APP_KEY_CTRL('w'));
    app_key(&a, APP_KEY_CTRL('w'));
    ck_assert_str_eq(a.edit, "Your journey starts with ");
    type("a giant leap!");
    app_key(&a, APP_KEY_HOME);
    app_key(&a, APP_KEY_DELETE);
    type("y");
    app_key(&a, APP_KEY_END);
    app_key(&a, APP_KEY_BACKSPACE);
    app_key(&a, APP_KEY_LEFT);
    app_key(&a, APP_KEY_RIGHT);
    ck_assert_str_eq(a.edit, "your journey starts with a giant leap");
    app_key(&a, APP_KEY_ENTER);
    ck_assert(!a.view.editing);
    ck_assert_int_eq(a.pipe.tokens.count, 7);
    ck_assert_int_eq(a.pipe.made_up[0], 0); /* case-insensitive lookup */
    ck_assert_int_eq(a.pipe.made_up[5], 1);
    ck_assert_str_eq(a.sentence, "your journey starts with a giant leap");

    /* Esc cancels; Ctrl-U clears to the start; non-ASCII text is fine. */
    keys("e");
    app_key(&a, APP_KEY_CTRL('u'));
    type("x");
    app_key(&a, APP_KEY_ESCAPE);
    ck_assert_str_eq(a.sentence, "your journey starts with a giant leap");
    keys("e");
    app_key(&a, APP_KEY_CTRL('u'));
    app_key(&a, 0x00E9); /* é */
    app_key(&a, APP_KEY_BACKSPACE);
    ck_assert_str_eq(a.edit, "");
    type("caf");
    app_key(&a, 0x00E9);
    app_key(&a, APP_KEY_ENTER);
    ck_assert_str_eq(a.pipe.tokens.text[0], "caf\xc3\xa9");
}
END_TEST

START_TEST(a_bad_edit_keeps_the_last_good_state)
{
    keys("e");
    app_key(&a, APP_KEY_CTRL('u'));
    type("   ");
    app_key(&a, APP_KEY_ENTER);
    ck_assert(a.view.message_is_error);
    ck_assert_ptr_nonnull(strstr(a.message, "the sentence is empty"));
    ck_assert_int_eq(a.pipe.tokens.count, 6);
    ck_assert_str_eq(a.sentence, "Your journey starts with one step");
    keys("6"); /* the next key clears the message */
    ck_assert_ptr_null(a.view.message);
}
END_TEST

START_TEST(hostile_edits_and_knobs_keep_a_working_view)
{
    struct grid g;
    struct attention_config good;

    ck_assert_int_eq(grid_create(&g, 80, 24), 0);
    /* Controls, DEL, C1, bidi controls and surrogates are not typed into the sentence. */
    keys("e");
    app_key(&a, APP_KEY_CTRL('u'));
    app_key(&a, 0x1B);
    app_key(&a, 0x7F);
    app_key(&a, 0x9B);
    app_key(&a, 0xD800);
    app_key(&a, 0x202E); /* right-to-left override */
    app_key(&a, 0x2066);
    app_key(&a, 0x110000 - 1);
    type("ok");
    ck_assert_str_eq(a.edit, "\xf4\x8f\xbf\xbfok");
    /* A long sentence is edited whole (before: cut at 4,096 bytes, 841 of 4,096 tokens applied). */
    for (int i = 0; i < 1500; i++) /* 6,000 bytes */
        type(i % 2 ? "\xc3\xa9t\xc3\xa9 " : "w ");
    ck_assert(!a.view.message_is_error);
    app_key(&a, APP_KEY_ENTER);
    ck_assert_str_eq(a.sentence, a.edit);
    ck_assert_uint_gt(strlen(a.sentence), 6000);
    ck_assert_int_eq(a.pipe.tokens.count, 1500); /* "ok" and the first "w" are one word */
    app_render(&a, &g);
    /* Editing it again starts from all of it, and Enter changes nothing. */
    keys("e");
    ck_assert_uint_eq(strlen(a.edit), strlen(a.sentence));
    app_key(&a, APP_KEY_ENTER);
    ck_assert_int_eq(a.pipe.tokens.count, 1500); /* "ok" and the first "w" are one word */
    /* Past the tokenizer's bytes: refused with a message, the text kept whole. */
    {
        char *big = malloc(TOKENIZER_MAX_BYTES);
        ck_assert_ptr_nonnull(big);
        memset(big, 'a', TOKENIZER_MAX_BYTES - 1);
        big[TOKENIZER_MAX_BYTES - 1] = '\0';
        keys("e");
        ck_assert_int_eq(app_edit_start(&a, big), 0);
        free(big);
    }
    type("x");
    ck_assert(!a.view.message_is_error);
    type("y");
    ck_assert(a.view.message_is_error);
    ck_assert_ptr_nonnull(strstr(a.message, "as long as attnscope takes"));
    ck_assert_uint_eq(strlen(a.edit), TOKENIZER_MAX_BYTES);
    app_key(&a, APP_KEY_ESCAPE);
    /* Knobs pushed past their ends: the last good state stays, and says why. */
    keys("e");
    app_key(&a, APP_KEY_CTRL('u'));
    type("Your journey starts with one step");
    app_key(&a, APP_KEY_ENTER);
    for (int i = 0; i < 40; i++)
        keys("DHO<");
    ck_assert_int_eq(a.cfg.heads, 1);
    ck_assert_int_eq(a.cfg.d_out, 1);
    ck_assert(a.cfg.dropout == 0.0);
    ck_assert(a.cfg.temperature == 0.1);
    keys("S");
    ck_assert_uint_eq(a.cfg.seed, 122);
    good = a.cfg;
    keys("vvv"); /* mha -> notes -> nn-mha -> simple */
    keys("dh");
    ck_assert(a.view.message_is_error);
    ck_assert_ptr_nonnull(strstr(a.message, "only wrapper, mha, notes and nn-mha have several heads"));
    ck_assert_int_eq(a.cfg.variant, ATTN_SIMPLE);
    keys("VVV");
    ck_assert_int_eq(a.cfg.variant, good.variant);
    app_render(&a, &g);
    ck_assert_int_eq(a.pipe.tokens.count, 6);
    grid_destroy(&g);
}
END_TEST

/* The files of a folder, hidden ones not counted. */
static int
files_in(const char *path)
{
    int hidden;
    int n = test_count_entries(path, &hidden);

    return n < 0 ? n : n - hidden;
}

START_TEST(export_keys_write_csv)
{
    keys("6x");
    ck_assert_int_eq(files_in(dir), 2);
    ck_assert_ptr_nonnull(strstr(a.message, "wrote 2 files (weights.h0.csv ...) into"));
    keys("0x");
    ck_assert_ptr_nonnull(strstr(a.message, "wrote output.csv into"));
    keys("X");
    ck_assert_ptr_nonnull(strstr(a.message, "wrote 24 files into"));
    ck_assert_int_eq(files_in(dir), 24);
    a.export_dir = "/proc/attnscope-cannot-write-here";
    keys("x");
    ck_assert(a.view.message_is_error);
}
END_TEST

/*
 * In presentation mode a clicker walks a trained model's lesson through the
 * map and the sentence view, which take PgDn and the arrows as their own
 * keys otherwise; those screens are drawn without bars and centred (issue 27,
 * item 7).
 */
START_TEST(the_clicker_walks_every_screen_and_each_is_presentable)
{
    struct walkthrough w;
    struct attn_error err;
    char *text;
    char *line;

    ck_assert_msg(walkthrough_load(&w, test_path("samples/walkthroughs/08-minigpt-heads.walk"),
                                   &err) == ATTN_OK,
                  "%s", err.msg);
    ck_assert_msg(app_play(&a, &w, &err) == ATTN_OK, "%s", err.msg);
    keys("z");
    app_key(&a, APP_KEY_PAGE_DOWN);
    ck_assert_int_eq(a.view.step, 1);
    ck_assert_int_eq(a.view.screen, SCREEN_MAP);
    app_key(&a, APP_KEY_PAGE_DOWN); /* the map's own key otherwise: a page of layers */
    ck_assert_int_eq(a.view.step, 2);
    ck_assert_int_eq(a.view.screen, SCREEN_SENTENCE);
    ck_assert(a.view.following);
    app_key(&a, APP_KEY_RIGHT); /* the sentence view's next query otherwise */
    ck_assert_int_eq(a.view.step, 3);
    ck_assert_int_eq(a.view.screen, SCREEN_MAP);
    app_key(&a, APP_KEY_LEFT);
    ck_assert_int_eq(a.view.step, 2);
    ck_assert(a.view.following);
    text = frame_text(100, 30);
    /* No knob bar, no line of keys, no footer; the title is not at the left edge. */
    ck_assert_msg(strstr(text, "Left Right or a letter: query") == NULL, "%s", text);
    ck_assert_msg(strstr(text, "q quit") == NULL, "%s", text);
    ck_assert_msg(strstr(text, "heads=") == NULL && strstr(text, "layer=") == NULL, "%s", text);
    line = strstr(text, "What '");
    ck_assert_msg(line != NULL && line != text && line[-1] == ' ', "%s", text);
    free(text);
    keys("z"); /* the same screen with its bars */
    text = frame_text(100, 30);
    ck_assert_msg(strstr(text, "\nWhat '") != NULL && strstr(text, "Left Right or a letter: query"), "%s",
                  text);
    free(text);
    app_key(&a, APP_KEY_RIGHT); /* not presenting: the query moves, the step stays */
    ck_assert_int_eq(a.view.step, 2);
}
END_TEST

/*
 * A step's words never point at what the layout left out (issue 62, item
 * 12): lesson 08's first step speaks of the cell panel, which presentation
 * mode at 100x30 has no room for, nor the view with i; where the panel is
 * shown (the view, presentation mode at 200x60), the words say it.
 */
START_TEST(a_steps_words_speak_of_the_panel_only_when_it_is_shown)
{
    struct walkthrough w;
    struct attn_error err;
    char *text;
    const char *said = "how BPE built it";

    ck_assert_msg(walkthrough_load(&w, test_path("samples/walkthroughs/08-minigpt-heads.walk"),
                                   &err) == ATTN_OK,
                  "%s", err.msg);
    ck_assert_msg(app_play(&a, &w, &err) == ATTN_OK, "%s", err.msg);
    text = frame_text(100, 30);
    ck_assert_msg(strstr(text, said) != NULL && strstr(text, "How this cell is made") != NULL,
                  "%s", text);
    free(text);
    keys("i"); /* the panel hidden */
    text = frame_text(100, 30);
    ck_assert_msg(strstr(text, said) == NULL && strstr(text, "How this cell is made") == NULL,
                  "%s", text);
    free(text);
    keys("i");
    keys("z"); /* presenting: at 100x30 the matrix leaves no room for the panel */
    text = frame_text(100, 30);
    ck_assert_msg(strstr(text, said) == NULL, "%s", text);
    ck_assert_msg(strstr(text, "as in its training.") != NULL, "%s", text);
    free(text);
    text = frame_text(200, 60); /* room for it: shown, and spoken of */
    ck_assert_msg(strstr(text, said) != NULL, "%s", text);
    free(text);
}
END_TEST

/* A key a lesson's words name, by its name there ("Tab", "the arrows", "e"); 0 for none. */
static int
named_key(const char *word, int *more)
{
    static const struct {
        const char *name;
        int key;
    } names[] = {
        { "Tab", APP_KEY_TAB },   { "Enter", APP_KEY_ENTER }, { "Backspace", APP_KEY_BACKSPACE },
        { "Left", APP_KEY_LEFT }, { "Right", APP_KEY_RIGHT }, { "Esc", APP_KEY_ESCAPE },
        { "Home", APP_KEY_HOME }, { "End", APP_KEY_END },     { "PgUp", APP_KEY_PAGE_UP },
        { "PgDn", APP_KEY_PAGE_DOWN },
    };

    *more = 0;
    if (strcmp(word, "arrows") == 0) {
        *more = 3; /* Up, Down, Left, Right */
        return APP_KEY_UP;
    }
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(word, names[i].name) == 0)
            return names[i].key;
    return 0;
}

/*
 * The keys the {view: ...} words of narration tell the user to press: named
 * keys (Tab, Enter, the arrows ...), the key after "Press" or "Try" (and
 * after its "and"), and a one-character word before a verb ("g for both",
 * "a ablates", "W switches").  At most max.
 */
static int
quoted_keys(const char *narration, int *keys, int max)
{
    static const char *const verbs[] = { "for", "switches", "ablates", "shows", "opens", "changes",
                                         "goes", "to" };
    int n = 0;
    const char *at = narration;

    while ((at = strstr(at, "{view:")) != NULL && n < max) {
        const char *end = strchr(at, '}');
        char words[64][32];
        int count = 0;
        at += 6;
        while (at < end && count < 64) {
            size_t len;
            at += strspn(at, " \n(");
            len = strcspn(at, " \n)}");
            if (len == 0)
                break;
            snprintf(words[count], sizeof words[count], "%.*s", (int)(len < 31 ? len : 31), at);
            /* "Tab;" "arrows:" -> the word; a one-character word ("," ".") stays as it is. */
            while (strlen(words[count]) > 1 && strchr(",.;:", words[count][strlen(words[count]) - 1]))
                words[count][strlen(words[count]) - 1] = '\0';
            count++;
            at += len;
        }
        for (int i = 0; i < count && n < max; i++) {
            int more;
            int key = named_key(words[i], &more);
            const bool after_press = i > 0 && (strcmp(words[i - 1], "Press") == 0 ||
                                               strcmp(words[i - 1], "press") == 0 ||
                                               strcmp(words[i - 1], "Try") == 0 ||
                                               (i > 1 && strcmp(words[i - 1], "and") == 0 &&
                                                strlen(words[i - 2]) == 1));
            bool before_verb = false;
            for (size_t v = 0; v < sizeof verbs / sizeof verbs[0] && i + 1 < count; v++)
                before_verb |= strcmp(words[i + 1], verbs[v]) == 0;
            if (key == 0 && strlen(words[i]) == 1 && (after_press || before_verb) &&
                strcmp(words[i], "a") != 0)
                key = (unsigned char)words[i][0];
            if (key == 0 && strcmp(words[i], "a") == 0 && i + 1 < count &&
                strcmp(words[i + 1], "ablates") == 0)
                key = 'a';
            if (key == 0)
                continue;
            keys[n++] = key;
            for (int k = 1; k <= more && n < max; k++)
                keys[n++] = key + k;
        }
        at = end;
    }
    return n;
}

/*
 * Every key a shipped lesson's words tell the user to press does something
 * on the screen of the step that says it (issue 27, item 10: lesson 09's
 * last step said "press e" where e was refused).  Lessons whose model is not
 * on this machine are skipped.
 */
START_TEST(every_key_a_lesson_quotes_works_where_it_is_quoted)
{
    DIR *d = opendir(test_path("samples/walkthroughs"));
    struct dirent *e;
    int checked = 0;

    ck_assert_ptr_nonnull(d);
    while ((e = readdir(d)) != NULL) {
        char path[4400];
        struct walkthrough w;
        struct attn_error err;
        struct app b;
        struct attention_config cfg;
        struct pipeline_source src = { .sentence = "a", .vocab = &book };
        if (strstr(e->d_name, ".walk") == NULL)
            continue;
        snprintf(path, sizeof path, "%s/%s", test_path("samples/walkthroughs"), e->d_name);
        ck_assert_msg(walkthrough_load(&w, path, &err) == ATTN_OK, "%s", err.msg);
        attention_config_init(&cfg);
        ck_assert(app_init(&b, &cfg, &src, NULL, &err) == ATTN_OK);
        if (app_play(&b, &w, &err) != ATTN_OK) {
            ck_assert_msg(err.status == ATTN_EABSENT, "%s: %s", e->d_name, err.msg);
            walkthrough_destroy(&w); /* (app_play took it only when it played) */
            app_destroy(&b);
            continue;
        }
        for (int k = 0; k < b.walk.count; k++) {
            int keys[32];
            int n;
            app_step_to(&b, k);
            ck_assert_int_eq(b.view.step, k);
            /* What speaks of the cell panel is in {panel: ...}: a screen without it hears none. */
            ck_assert_ptr_nonnull(b.narration_bare);
            ck_assert_msg(strstr(b.narration_bare, "panel") == NULL,
                          "%s step %d (%s) speaks of the panel outside {panel: ...}: %s",
                          e->d_name, k + 1, b.walk.steps[k].title, b.narration_bare);
            n = quoted_keys(b.walk.steps[k].narration, keys, 32);
            for (int i = 0; i < n; i++) {
                ck_assert_msg(app_key_answered(&b, keys[i]),
                              "%s step %d (%s): its words quote key %d, which does nothing on "
                              "screen %d",
                              e->d_name, k + 1, b.walk.steps[k].title, keys[i], (int)b.view.screen);
                checked++;
            }
        }
        app_destroy(&b);
    }
    closedir(d);
    ck_assert_int_gt(checked, 20); /* (the lessons quote keys: the parse finds them) */
}
END_TEST

/* A key too wide for the help's column ("Space Backspace") is whole, on a row of its own. */
START_TEST(the_help_shows_every_key_whole)
{
    char *text;

    keys("?");
    free(frame_text(100, 60)); /* (drawn once: Down scrolls as far as the drawn help goes) */
    for (int i = 0; i < 60; i++) /* (to the end: the help grows with the keys) */
        app_key(&a, APP_KEY_DOWN);
    text = frame_text(100, 60);
    ck_assert_msg(strstr(text, " Space Backspace\n"), "%s", text);
    free(text);
}
END_TEST

/*
 * K swaps the sentence view's roles: who attends to the key, each query
 * shaded by the weight it gives it (issue 27, item 4); a letter goes to the
 * next token it starts (item 14).
 */
START_TEST(the_sentence_view_shows_who_attends_to_a_key)
{
    char *text;
    struct pipeline_view w;

    keys("T");
    ck_assert_int_eq(a.view.screen, SCREEN_SENTENCE);
    app_key(&a, APP_KEY_RIGHT); /* the query "journey" */
    keys("K");
    ck_assert(a.view.key_side);
    ck_assert_int_eq(a.view.cursor_col, 1); /* the same token, as the key */
    text = frame_text(100, 30);
    ck_assert_msg(strstr(text, "Who attends to 'journey': head 0 of 2"), "%s", text);
    /* Column 1 of head 0's weights, largest first: the queries that can see "journey". */
    pipeline_stage_view(&a.pipe, STAGE_WEIGHTS, 0, &w);
    {
        char want[64];
        snprintf(want, sizeof want, "most attention from: journey %.2f, starts %.2f",
                 (double)MAT_AT(&w.m, 1, 1), (double)MAT_AT(&w.m, 2, 1));
        ck_assert(MAT_AT(&w.m, 1, 1) > MAT_AT(&w.m, 2, 1));
        ck_assert_msg(strstr(text, want), "%s (want %s)", text, want);
    }
    ck_assert_msg(strstr(text, "Your 0.") == NULL, "the mask hides journey from Your: %s", text);
    free(text);
    keys("s"); /* the next token starting with s: starts, then step */
    ck_assert_int_eq(a.view.cursor_col, 2);
    keys("s");
    ck_assert_int_eq(a.view.cursor_col, 5);
    keys("s"); /* round to the start: starts again */
    ck_assert_int_eq(a.view.cursor_col, 2);
    keys("v"); /* (v is no word's letter here) */
    ck_assert_ptr_nonnull(strstr(a.message, "no token starts with 'v'"));
    keys("K");
    ck_assert(!a.view.key_side);
    ck_assert_int_eq(a.view.cursor_row, 2); /* back to what "starts" attends to */
    text = frame_text(100, 30);
    ck_assert_msg(strstr(text, "What 'starts' attends to"), "%s", text);
    free(text);
}
END_TEST

/*
 * A lesson's narration after a knob or an edit says its numbers may not
 * hold any more; Esc closes it (the message first, when there is one),
 * Enter brings the step back (issue 27, item 9).
 */
START_TEST(a_stale_narration_says_so_and_closes)
{
    struct walkthrough w;
    struct attn_error err;
    char *text;

    ck_assert_msg(walkthrough_load(&w, test_path("samples/walkthroughs/03-causal-and-dropout.walk"),
                                   &err) == ATTN_OK,
                  "%s", err.msg);
    ck_assert_msg(app_play(&a, &w, &err) == ATTN_OK, "%s", err.msg);
    text = frame_text(100, 30);
    ck_assert(strstr(text, "its numbers may not hold") == NULL);
    free(text);
    keys("3"); /* another stage: off the script, but the numbers hold */
    text = frame_text(100, 30);
    ck_assert_msg(strstr(text, "exploring on your own") && !strstr(text, "may not hold"), "%s", text);
    free(text);
    keys("s"); /* another seed: they do not */
    ck_assert_ptr_nonnull(a.view.narration);
    text = frame_text(100, 30);
    ck_assert_msg(strstr(text, "changed since this step, its numbers may not hold") !=
                      NULL,
                  "%s", text);
    free(text);
    app_key(&a, APP_KEY_ESCAPE); /* the seed's message first */
    ck_assert_ptr_nonnull(a.view.narration);
    app_key(&a, APP_KEY_ESCAPE);
    ck_assert_ptr_null(a.view.narration);
    ck_assert_ptr_nonnull(strstr(a.message, "narration closed"));
    text = frame_text(100, 30);
    ck_assert(strstr(text, "may not hold") == NULL);
    free(text);
    app_key(&a, APP_KEY_ENTER); /* the step again, as written */
    ck_assert_ptr_nonnull(a.view.narration);
    ck_assert(a.view.following);
    text = frame_text(100, 30);
    ck_assert(strstr(text, "may not hold") == NULL);
    free(text);
}
END_TEST

/*
 * g on 12 heads of 15 tokens: every head's every column in sight, one
 * character a cell, the labels once for a row of heads, the same cursor on
 * each; where the height does not hold them all they are paged and Tab moves
 * the page with the head (issue 27, item 2: one column per head).
 */
START_TEST(the_grid_of_twelve_heads_is_usable)
{
    struct model m;
    struct app b;
    char *text;

    open_twelve_by_twelve(&b, &m);
    app_key(&b, '6');
    app_key(&b, 'g');
    app_key(&b, APP_KEY_DOWN);
    app_key(&b, APP_KEY_DOWN);
    text = frame_of(&b, 200, 50);
    ck_assert_int_eq(b.view.frame.tiles, 12);
    ck_assert_int_eq(b.view.frame.heads_shown, 12);
    for (int t = 0; t < 12; t++) {
        const struct heatmap_geometry *geo = &b.view.frame.geo[t];
        ck_assert_int_eq(geo->vis_cols, 15);
        ck_assert_int_eq(geo->cell_w, 1);
        ck_assert_int_eq(geo->y0, b.view.frame.geo[0].y0);
        ck_assert_int_eq(b.view.frame.tile_head[t], t);
    }
    ck_assert_msg(strstr(text, "heads 0-") == NULL, "%s", text);
    free(text);

    text = frame_of(&b, 100, 30);
    ck_assert_int_lt(b.view.frame.heads_shown, 12);
    ck_assert_int_eq(b.view.frame.heads_first, 0);
    for (int t = 0; t < b.view.frame.tiles; t++) {
        ck_assert_int_eq(b.view.frame.geo[t].vis_cols, 15);
        ck_assert_int_eq(b.view.frame.geo[t].row0, b.view.frame.geo[0].row0);
    }
    {
        char want[64];
        snprintf(want, sizeof want, "heads 0-%d of 12 (Tab)", b.view.frame.heads_shown - 1);
        ck_assert_msg(strstr(text, want), "%s", text);
    }
    free(text);
    for (int k = b.view.frame.heads_shown; k > 0; k--)
        app_key(&b, APP_KEY_TAB);
    free(frame_of(&b, 100, 30));
    ck_assert_int_eq(b.view.frame.heads_first, b.view.frame.heads_shown > 0 ? b.view.head : -1);
    ck_assert_int_eq(b.view.frame.tile_head[0], b.view.head);
    /* A click on another head's cell picks that head and cell. */
    {
        const struct heatmap_geometry *geo = &b.view.frame.geo[1];
        app_click(&b, geo->x0 + 1, geo->y0 + 1);
        ck_assert_int_eq(b.view.head, b.view.frame.tile_head[1]);
        ck_assert_int_eq(b.view.cursor_row, geo->row0 + 1);
        ck_assert_int_eq(b.view.cursor_col, geo->col0 + 1);
    }
    app_destroy(&b);
    model_close(&m);
}
END_TEST

START_TEST(every_heads_heatmap_at_any_size)
{
    struct model m;
    struct app b;
    struct grid g;
    char *text;
    size_t len;
    FILE *f;

    open_twelve_by_twelve(&b, &m);
    app_key(&b, 'L');
    app_key(&b, APP_KEY_BACKTAB);
    ck_assert_int_eq(b.view.map_measure, VIEW_MAP_HEATMAPS);

    ck_assert_int_eq(grid_create(&g, 100, 30), 0);
    app_render(&b, &g);
    text = NULL;
    f = open_memstream(&text, &len);
    grid_dump_text(&g, f);
    fclose(f);
    ck_assert_msg(strstr(text, "3 x 3 tokens a cell (max-pooled); layers 0-2 of 12, PgUp PgDn"),
                  "%s", text);
    ck_assert_int_eq(b.view.frame.map_layers, 3);
    free(text);
    /* Each of layer 0's heads: cell (bi, bj) is the largest weight of its 3 x 3 block. */
    for (int h = 0; h < 12; h++) {
        struct pipeline_view w;
        pipeline_stage_view(&b.pipe, STAGE_WEIGHTS, h, &w);
        for (int bi = 0; bi < 5; bi++)
            for (int bj = 0; bj <= bi; bj++) {
                const struct cell *c = grid_at(&g, 9 + h * 6 + bj, 7 + bi);
                float best = -1.0f;
                for (int i = 3 * bi; i < 15 && i < 3 * bi + 3; i++)
                    for (int j = 3 * bj; j <= i && j < 3 * bj + 3; j++)
                        best = MAT_AT(&w.m, i, j) > best ? MAT_AT(&w.m, i, j) : best;
                ck_assert_int_eq(c->role, ROLE_HEAT);
                ck_assert_msg(c->level == (int)(best * 255.0f + 0.5f),
                              "head %d cell (%d, %d): level %d, the block's largest weight %g", h,
                              bi, bj, c->level, (double)best);
            }
        /* Above the diagonal the mask hides every key of the block. */
        ck_assert_int_ne(grid_at(&g, 9 + h * 6 + 4, 7)->role, ROLE_HEAT);
    }
    /*
     * f: each head scaled by its largest weight off the first key (an attention
     * sink no longer flattens the rest); a block of the first key alone is the
     * top colour.
     */
    app_key(&b, 'f');
    app_render(&b, &g);
    for (int h = 0; h < 12; h++) {
        struct pipeline_view w;
        float top = 0.0f;
        pipeline_stage_view(&b.pipe, STAGE_WEIGHTS, h, &w);
        for (int i = 0; i < 15; i++)
            for (int j = 1; j <= i; j++)
                top = MAT_AT(&w.m, i, j) > top ? MAT_AT(&w.m, i, j) : top;
        ck_assert_int_eq(grid_at(&g, 9 + h * 6, 7)->level, 255);
        for (int bi = 1; bi < 5; bi++)
            for (int bj = 0; bj <= bi; bj++) {
                float best = -1.0f;
                for (int i = 3 * bi; i < 15 && i < 3 * bi + 3; i++)
                    for (int j = 3 * bj; j <= i && j < 3 * bj + 3; j++)
                        if (j > 0)
                            best = MAT_AT(&w.m, i, j) > best ? MAT_AT(&w.m, i, j) : best;
                ck_assert_int_eq(grid_at(&g, 9 + h * 6 + bj, 7 + bi)->level,
                                 (int)(best / top * 255.0f + 0.5f));
            }
    }
    text = NULL;
    f = open_memstream(&text, &len);
    grid_dump_text(&g, f);
    fclose(f);
    ck_assert_msg(strstr(text, "(max-pooled), without the first key (f)"), "%s", text);
    free(text);
    app_key(&b, 'f');
    app_key(&b, APP_KEY_PAGE_DOWN);
    ck_assert_int_eq(b.view.map_row, 3);
    app_render(&b, &g);
    text = NULL;
    f = open_memstream(&text, &len);
    grid_dump_text(&g, f);
    fclose(f);
    ck_assert_msg(strstr(text, "layers 3-5 of 12") && strstr(text, "\u25b8layer 3"), "%s", text);
    free(text);
    grid_destroy(&g);

    ck_assert_int_eq(grid_create(&g, 200, 50), 0);
    app_render(&b, &g);
    text = NULL;
    f = open_memstream(&text, &len);
    grid_dump_text(&g, f);
    fclose(f);
    /* (15 tokens in a head's 14 columns: pooled 2 x 2, four layers at a time) */
    ck_assert_msg(strstr(text, "2 x 2 tokens a cell (max-pooled); layers 3-6 of 12, PgUp PgDn"),
                  "%s", text);
    free(text);
    grid_destroy(&g);
    app_key(&b, APP_KEY_ENTER); /* the cursor's head, whole */
    ck_assert_int_eq(b.view.screen, SCREEN_STAGE);
    ck_assert_int_eq(b.pipe.layer, 3);
    app_destroy(&b);
    model_close(&m);
}
END_TEST

static Suite *
app_screens_suite(void)
{
    Suite *s = suite_create("app_screens");
    TCase *tc;

    tc = tcase_create("book");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, a_stale_narration_says_so_and_closes);
    tcase_add_test(tc, the_sentence_view_shows_who_attends_to_a_key);
    tcase_add_test(tc, the_help_shows_every_key_whole);
    tcase_add_test(tc, every_key_a_lesson_quotes_works_where_it_is_quoted);
    tcase_add_test(tc, the_clicker_walks_every_screen_and_each_is_presentable);
    tcase_add_test(tc, a_steps_words_speak_of_the_panel_only_when_it_is_shown);
    tcase_add_test(tc, every_heads_heatmap_at_any_size);
    tcase_add_test(tc, the_grid_of_twelve_heads_is_usable);
    tcase_add_test(tc, cross_attention_keys);
    tcase_add_test(tc, source_key_without_a_source);
    tcase_add_test(tc, editing_the_sentence);
    tcase_add_test(tc, pastes_are_text);
    tcase_add_test(tc, a_bad_edit_keeps_the_last_good_state);
    tcase_add_test(tc, hostile_edits_and_knobs_keep_a_working_view);
    tcase_add_test(tc, export_keys_write_csv);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(app_screens_suite)
