/*
 * knob_writing.c: the knobs of a model's writing (the book's generate:
 * --sample-temperature, --top-k, --top-p), rows of the knob table in
 * knob.c, which holds the table and the other knobs.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attnscope/pipeline/knob.h"
#include "attnscope/pipeline/pipeline.h"
#include "knob_internal.h"

int
knob_parse_sample_temperature(struct attention_config *c, const char *option, const char *text,
                         char *err, size_t size)
{
    double t;

    if (knob_parse_real(option, text, &t, err, size) != 0)
        return -1;
    if (t < 0.0)
        return attn_fail_text(err, size,
                              "%s %s: give 0 (greedy: the likeliest token) or a number above 0",
                              option, text);
    c->sample_temperature = t;
    return 0;
}

int
knob_step_sample_temperature(struct attention_config *c, int dir, const struct pipeline *p,
                        char *msg, size_t size)
{
    /* The book's figure 5.14's temperatures among them (0.1, 1, 5). */
    static const double steps[] = { 0.0, 0.1, 0.5, 0.7, 1.0, 1.4, 2.0, 5.0 };
    const int n = (int)(sizeof steps / sizeof steps[0]);
    int k = 0;

    (void)p;
    (void)msg;
    (void)size;
    while (k < n - 1 && steps[k] < c->sample_temperature - 1e-9)
        k++;
    k += dir;
    if (k < 0 || k >= n)
        return 0;
    c->sample_temperature = steps[k];
    return 1;
}

bool
knob_bar_sample_temperature(const struct pipeline *p, char *full, char *terse)
{
    if (p->cfg.sample_temperature == 0.0) {
        snprintf(full, KNOB_TEXT_MAX, "greedy");
        snprintf(terse, KNOB_TEXT_MAX, "greedy");
        return true;
    }
    attn_shortest(terse, KNOB_TEXT_MAX, p->cfg.sample_temperature);
    snprintf(full, KNOB_TEXT_MAX, "sample T %s", terse);
    return true;
}

void
knob_said_sample_temperature(const struct pipeline *p, char *msg, size_t size)
{
    char t[32];

    attn_shortest(t, sizeof t, p->cfg.sample_temperature);
    if (p->cfg.sample_temperature == 0.0)
        snprintf(msg, size, "writing greedily: the likeliest token every time (argmax)");
    else
        snprintf(msg, size, "sampling at temperature %s: logits / %s, softmax, then a draw "
                            "(torch.multinomial)%s",
                 t, t,
                 p->cfg.sample_temperature < 1.0   ? "; sharper than the model"
                 : p->cfg.sample_temperature > 1.0 ? "; flatter than the model"
                                                   : "");
}

int
knob_parse_top_k(struct attention_config *c, const char *option, const char *text, char *err,
            size_t size)
{
    int k;

    if (knob_parse_int(option, text, 0, 1 << 30, &k, err, size) != 0)
        return -1;
    if (k == 0)
        return attn_fail_text(err, size, "%s 0: give 1 or more (without it nothing is cut)",
                              option);
    c->top_k = k;
    return 0;
}

int
knob_step_top_k(struct attention_config *c, int dir, const struct pipeline *p, char *msg, size_t size)
{
    /* 0: no cut; the book's top_k=3 and top_k=25 among them. */
    static const int steps[] = { 0, 1, 3, 5, 10, 25, 50, 100 };
    const int n = (int)(sizeof steps / sizeof steps[0]);
    int k = 0;

    (void)p;
    (void)msg;
    (void)size;
    while (k < n - 1 && steps[k] < c->top_k)
        k++;
    k += dir;
    if (k < 0 || k >= n)
        return 0;
    c->top_k = steps[k];
    return 1;
}

bool
knob_bar_top_k(const struct pipeline *p, char *full, char *terse)
{
    if (p->cfg.top_k == 0)
        return false;
    snprintf(full, KNOB_TEXT_MAX, "top-k %d", p->cfg.top_k);
    snprintf(terse, KNOB_TEXT_MAX, "k%d", p->cfg.top_k);
    return true;
}

void
knob_said_top_k(const struct pipeline *p, char *msg, size_t size)
{
    if (p->cfg.top_k == 0)
        snprintf(msg, size, "top-k off: every token can be drawn");
    else
        snprintf(msg, size, "top-k %d: every logit below the %d%s likeliest's set to -inf "
                            "before the draw",
                 p->cfg.top_k, p->cfg.top_k,
                 p->cfg.top_k % 10 == 1 && p->cfg.top_k != 11   ? "st"
                 : p->cfg.top_k % 10 == 2 && p->cfg.top_k != 12 ? "nd"
                 : p->cfg.top_k % 10 == 3 && p->cfg.top_k != 13 ? "rd"
                                                                : "th");
}

int
knob_parse_top_p(struct attention_config *c, const char *option, const char *text, char *err,
            size_t size)
{
    double v;

    if (knob_parse_real(option, text, &v, err, size) != 0)
        return -1;
    if (!(v > 0.0 && v <= 1.0))
        return attn_fail_text(err, size, "%s %s: give a number above 0, at most 1 (1: no cut)",
                              option, text);
    c->top_p = v;
    return 0;
}

bool
knob_bar_top_p(const struct pipeline *p, char *full, char *terse)
{
    if (p->cfg.top_p >= 1.0)
        return false;
    attn_shortest(terse, KNOB_TEXT_MAX, p->cfg.top_p);
    snprintf(full, KNOB_TEXT_MAX, "top-p %s", terse);
    return true;
}

void
knob_said_top_p(const struct pipeline *p, char *msg, size_t size)
{
    char v[32];

    attn_shortest(v, sizeof v, p->cfg.top_p);
    if (p->cfg.top_p >= 1.0)
        snprintf(msg, size, "top-p off: every token can be drawn");
    else
        snprintf(msg, size, "top-p %s: only the likeliest tokens whose probabilities reach %s "
                            "can be drawn (Hugging Face's TopPLogitsWarper)",
                 v, v);
}

