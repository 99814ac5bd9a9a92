/*
 * app_write.c: a trained model writing in the view (generate.h): G writes
 * the next token, A keeps writing until a key, Backspace takes the last
 * one back; the writing's knobs (its seed, temperature, top-k, top-p)
 * change the next draw and nothing shown.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "attnscope/families/model/family_model.h"
#include "attnscope/families/model/generate.h"
#include "attnscope/pipeline/knob.h"
#include "front/app/app_keys.h"

void
app_end_writing(struct app *a)
{
    if (a->writing != NULL) {
        generation_destroy(a->writing);
        free(a->writing);
        a->writing = NULL;
    }
    a->writing_on = false;
}

/* The writing's options from the knobs. */
static void
options_of(const struct app *a, const struct attention_config *cfg, struct generate_options *o)
{
    generate_options_init(o);
    o->sample.temperature = cfg->sample_temperature;
    o->sample.top_k = cfg->top_k;
    o->sample.top_p = cfg->top_p;
    o->seed = cfg->seed;
    o->end = a->eos;
}

/* Whether cfg differs from the app's only in the writing's knobs (and the seed, a model's). */
static bool
only_writing(const struct app *a, const struct attention_config *cfg)
{
    struct attention_config c = *cfg;

    c.sample_temperature = a->cfg.sample_temperature;
    c.top_k = a->cfg.top_k;
    c.top_p = a->cfg.top_p;
    c.seed = a->cfg.seed;
    return memcmp(&c, &a->cfg, sizeof c) == 0;
}

bool
app_writing_knobs(struct app *a, const struct attention_config *cfg, int *result)
{
    struct generate_options o;
    struct attn_error err;

    if (pipeline_decoder(&a->pipe) == NULL || !only_writing(a, cfg) ||
        (cfg->sample_temperature == a->cfg.sample_temperature && cfg->top_k == a->cfg.top_k &&
         cfg->top_p == a->cfg.top_p && cfg->seed == a->cfg.seed))
        return false; /* (nothing of the writing's changed: a rebuild asked for, as it was) */
    options_of(a, cfg, &o);
    if (sample_check(&o.sample, decoder_outputs(&a->src.model->dec.cfg), &err) != ATTN_OK) {
        app_complain(a, err.msg);
        *result = -1;
        return true;
    }
    if (a->writing != NULL) {
        a->writing->o.sample = o.sample;
        /* A new seed: torch.manual_seed(seed) now, before the next draw. */
        if (cfg->seed != a->cfg.seed)
            rng_seed(&a->writing->gen, cfg->seed);
        a->writing->o.seed = cfg->seed;
    }
    a->cfg = *cfg;
    a->pipe.cfg.sample_temperature = cfg->sample_temperature;
    a->pipe.cfg.top_k = cfg->top_k;
    a->pipe.cfg.top_p = cfg->top_p;
    a->pipe.cfg.seed = cfg->seed;
    *result = 0;
    return true;
}

/* The writing begun on the text shown (the prompt), or said why not; 0 or -1. */
static int
begin(struct app *a)
{
    struct generate_options o;
    struct pipeline_source src;
    struct attn_error err;

    if (a->writing != NULL && a->writing->n > 0)
        return 0;
    if (a->src.model == NULL || pipeline_decoder(&a->pipe) == NULL) {
        app_complain(a, "G writes with a trained model (--model): the book's classes have no "
                        "vocabulary head to write from");
        return -1;
    }
    app_end_writing(a);
    a->writing = calloc(1, sizeof *a->writing);
    if (a->writing == NULL) {
        app_complain(a, "out of memory");
        return -1;
    }
    options_of(a, &a->cfg, &o);
    app_source(a, a->sentence, a->source, a->switches.mask[SWITCH_ABLATE], &src);
    if (generation_init(a->writing, a->src.model, &o, &err) != ATTN_OK ||
        generation_begin(a->writing, &a->pipe, &a->cfg, &src, 0, &err) != ATTN_OK) {
        app_end_writing(a);
        app_complain(a, err.msg);
        return -1;
    }
    return 0;
}

/* The app's text after a change of the written tokens: what the editor starts from. */
static void
follow_text(struct app *a)
{
    const struct generation *g = a->writing;
    char *text = generation_text(g, g->bos ? 1 : 0, -1);

    if (text != NULL) {
        free(a->sentence);
        a->sentence = text;
    }
    /* The new token's row in sight: the cursor on the last query. */
    a->view.cursor_row = a->pipe.st.nq - 1;
    a->view.next_first = -1;
    view_clamp(&a->view, &a->pipe);
}

/* Writes one token and says what it was; 0, or -1 (said why) when none was written. */
/* Decimals a time in milliseconds is said with: a small model's token takes a fraction of one. */
static int
ms_digits(double seconds)
{
    return seconds < 0.001 ? 2 : seconds < 0.01 ? 1 : 0;
}

static int
write_one(struct app *a)
{
    struct pipeline_source src;
    struct attn_error err;
    enum attn_status st;
    bool ended;
    char shown[MODEL_TOKEN_DISPLAY_MAX(64)];

    if (begin(a) != 0)
        return -1;
    app_source(a, a->sentence, a->source, a->switches.mask[SWITCH_ABLATE], &src);
    st = generation_write(a->writing, &a->pipe, &a->cfg, &src, &ended, &err);
    if (st == ATTN_ESTOPPED) {
        app_say(a, "stopped: the token under way was not written (%d written)",
                a->writing->written);
        return -1;
    }
    if (st != ATTN_OK) {
        app_complain(a, err.msg);
        return -1;
    }
    if (ended) {
        const struct sample_choice *c = &a->writing->end;
        app_say(a, "the model chose %s (id %d, p %.3f): the end token (%s), so the writing "
                   "stops, as the book's generate breaks; Backspace takes the draw back",
                model_token_display(a->src.model, c->id, shown, sizeof shown), c->id, (double)c->prob,
                a->writing->o.end.from[0] != '\0' ? a->writing->o.end.from : "--eos");
        return -1;
    }
    follow_text(a);
    {
        const struct generate_step *s = &a->writing->steps[a->writing->written - 1];
        const struct sample_choice *c = &s->choice;
        model_token_display(a->src.model, c->id, shown, sizeof shown);
        if (s->slid)
            app_say(a, "wrote %s (id %d, p %.3f): past the context of %d, the model reads the "
                       "last %d and computed them all again (%.*f ms)",
                    shown, c->id, (double)c->prob, a->writing->context, a->writing->context,
                    ms_digits(s->seconds), s->seconds * 1e3);
        else if (a->cfg.sample_temperature == 0.0)
            app_say(a, "wrote %s (id %d, p %.3f, the likeliest): one row a layer from the cache, "
                       "%.*f ms. G again, A keeps writing, Backspace takes it back",
                    shown, c->id, (double)c->prob_plain, ms_digits(s->seconds), s->seconds * 1e3);
        else if (c->at_limit)
            app_say(a, "drew %s (id %d, the likeliest): at T %g logits / T overflow float, so "
                       "the formula's limit, all of p on the largest logit, %.*f ms",
                    shown, c->id, a->cfg.sample_temperature, ms_digits(s->seconds),
                    s->seconds * 1e3);
        else
            app_say(a, "drew %s (id %d, rank %d, p %.3f -> %.3f after the cuts and T; q %.3f, "
                       "p/q %.3f the largest), %.*f ms. G again, A keeps writing",
                    shown, c->id, c->rank, (double)c->prob_plain, (double)c->prob, (double)c->q,
                    (double)c->ratio, ms_digits(s->seconds), s->seconds * 1e3);
    }
    return 0;
}

void
app_write_key(struct app *a, int key)
{
    (void)key;
    a->writing_on = false;
    (void)write_one(a);
}

void
app_keep_writing(struct app *a, int key)
{
    (void)key;
    a->write_left = 0;
    a->writing_on = write_one(a) == 0;
    if (a->writing_on && a->view.message != NULL && !a->view.message_is_error)
        app_say(a, "writing: a token a frame; any key stops (Esc just stops)");
}

/* The terminal's loop, between frames while A writes: one more token. */
static void
write_more(struct app *a)
{
    if (!a->writing_on)
        return;
    if (write_one(a) != 0) {
        a->writing_on = false;
        a->write_left = 0;
        return;
    }
    if (a->write_left > 0) {
        if (--a->write_left == 0) {
            a->writing_on = false;
            app_say(a, "wrote %d token%s (--generate); G writes more, Backspace takes one back",
                    a->writing->written, a->writing->written == 1 ? "" : "s");
            return;
        }
        app_say(a, "writing (--generate): %d written, %d to go; Esc, Ctrl-C or any key stops",
                a->writing->written, a->write_left);
        return;
    }
    app_say(a, "writing: %d token%s written; any key stops (Esc just stops)",
            a->writing->written, a->writing->written == 1 ? "" : "s");
}

void
app_write_meanwhile(struct app *a, int count)
{
    /* (begun now: beginning ends any writing there was, A's flag with it) */
    if (count <= 0 || begin(a) != 0)
        return;
    a->write_left = count;
    a->writing_on = true;
    app_say(a, "writing (--generate): %d to go; Esc, Ctrl-C or any key stops", count);
}

bool
app_writing(const struct app *a)
{
    return a->writing_on;
}

bool
app_can_unwrite(const struct app *a)
{
    return a->writing != NULL && (a->writing->written > 0 || a->writing->ended) &&
           pipeline_decoder(&a->pipe) != NULL;
}

void
app_unwrite(struct app *a)
{
    struct pipeline_source src;
    struct attn_error err;
    const bool was_end = a->writing->ended;

    app_source(a, a->sentence, a->source, a->switches.mask[SWITCH_ABLATE], &src);
    if (generation_undo(a->writing, &a->pipe, &a->cfg, &src, &err) != ATTN_OK) {
        app_complain(a, err.msg);
        return;
    }
    if (was_end) {
        app_say(a, "the end token's draw taken back: G draws it again (the generator as before "
                   "it)");
        return;
    }
    follow_text(a);
    app_say(a, "taken back: %d written; G writes it again (the generator as before it)",
            a->writing->written);
}

void
app_stopped(struct app *a)
{
    if (a->writing_on) {
        a->writing_on = false;
        a->write_left = 0;
        app_say(a, "writing stopped: %d token%s written", a->writing ? a->writing->written : 0,
                a->writing != NULL && a->writing->written == 1 ? "" : "s");
    }
}

/* Before the screens' keys: the terminal's "write more", and any key stops A's writing. */
bool
app_writing_key(struct app *a, int key)
{
    if (key == APP_KEY_WRITE_MORE) {
        write_more(a);
        return true;
    }
    if (a->writing_on) {
        app_stopped(a);
        return key == APP_KEY_ESCAPE; /* Esc just stops; another key also does its own */
    }
    return false;
}

enum attn_status
app_write_tokens(struct app *a, int count, struct attn_error *err)
{
    for (int i = 0; i < count; i++)
        if (write_one(a) != 0) {
            if (a->writing != NULL && a->writing->ended)
                return ATTN_OK; /* (the end token: what the book's generate does) */
            return attn_fail(err, ATTN_EVALUE, "--generate: %s", a->message);
        }
    return ATTN_OK;
}
