/*
 * knob.h: the knob table, one row per knob a learner can turn.
 *
 * A row says everything about its knob: the field of struct
 * attention_config it sets, its type and range, its command-line options
 * and their help, the keys that turn it in the interactive view and their
 * help, how it shows on the knob bar, what it says after a change, and what
 * a change forces to be recomputed.  getopt's table, the usage text, the
 * view's key bindings, its help screen, the knob bar and the decision to
 * recompute everything or only the attention are all made from the rows
 * (see doc/architecture.md, "Adding a knob").
 *
 * Option names and key letters are data here, like the knob's name: the
 * core still draws nothing and reads no key.
 */
#ifndef ATTNSCOPE_KNOB_H
#define ATTNSCOPE_KNOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attnscope/attention/attention_config.h"

struct pipeline;

/* X(enum, id): the knobs, in the order of the knob bar and the help. */
#define KNOB_LIST(X)                \
    X(KNOB_VARIANT, variant)        \
    X(KNOB_D_OUT, d_out)            \
    X(KNOB_HEADS, heads)            \
    X(KNOB_SEED, seed)              \
    X(KNOB_DROPOUT, dropout)        \
    X(KNOB_DROPOUT_PASS, dropout_pass) \
    X(KNOB_TRAIN, train)            \
    X(KNOB_MASK, mask)              \
    X(KNOB_SCALE, scale)            \
    X(KNOB_SCALE_DIM, scale_dim)    \
    X(KNOB_TEMPERATURE, temperature) \
    X(KNOB_POSITIONAL, positional)  \
    X(KNOB_RNG, rng)                \
    X(KNOB_BIAS, bias)              \
    X(KNOB_DROPOUT_SEED, dropout_seed) \
    X(KNOB_SAMPLE_TEMPERATURE, sample_temperature) \
    X(KNOB_TOP_K, top_k)            \
    X(KNOB_TOP_P, top_p)

enum knob_id {
#define KNOB_ENUM(e, id) e,
    KNOB_LIST(KNOB_ENUM)
#undef KNOB_ENUM
    KNOB_COUNT
};

/* What a change of the knob forces to be computed again. */
enum knob_recompute {
    RECOMPUTE_NOTHING,   /* no stage: only what a trained model writes next (generate.h) */
    RECOMPUTE_ATTENTION, /* the stages from the scores on: Q, K and V stay */
    RECOMPUTE_INPUTS,    /* the inputs and everything after them; parameters stay */
    RECOMPUTE_ALL,       /* the parameters too */
};

/* Where a knob's options go in the usage text. */
enum knob_group { KNOB_GROUP_INPUT, KNOB_GROUP_ATTENTION, KNOB_GROUP_WRITING };

/* One command-line option that sets a knob. */
struct knob_option {
    const char *name;    /* "dropout" for --dropout */
    const char *metavar; /* "P", or NULL: no argument, the option sets value */
    const char *value;   /* the text the option stands for when it has no argument */
    const char *help;    /* the usage text's line, wrapped as needed */
};

/* A size to print a knob's value into. */
#define KNOB_TEXT_MAX 64

struct knob {
    const char *name;               /* "dropout": messages and the manual */
    enum knob_recompute recompute;
    enum knob_group group;
    int priority;                   /* the command line applies lower ones first */
    struct knob_option options[2];  /* name NULL: none */
    /*
     * Sets the knob from text (an option's argument or value).  Returns 0,
     * or -1 with a message naming the option in err.  NULL: an on/off knob
     * ("on" or "off").
     */
    int (*parse)(struct attention_config *c, const char *option, const char *text, char *err,
                 size_t size);
    int key;                        /* the key that turns it up (or toggles it), or 0 */
    int key_back;                   /* the key that turns it down, or 0 */
    const char *keys;               /* the keys as the help lists them ("o O") */
    const char *key_help;           /* what the keys do */
    /*
     * Turns the knob one step in direction dir (1 or -1) from p's
     * configuration into c.  Returns 1 when c changed, 0 at the end of the
     * knob's range, -1 when the knob does not apply (why in msg).
     */
    int (*step)(struct attention_config *c, int dir, const struct pipeline *p, char *msg,
                size_t size);
    const char *bar_key;            /* the key the knob bar shows, or NULL: not on the bar */
    /*
     * The knob bar's text for p: full ("d_out 2") and terse ("2"); returns
     * false when the knob has nothing to show (an override that is off).
     */
    bool (*bar)(const struct pipeline *p, char *full, char *terse);
    /* What the view says after a change, given the new pipeline p. */
    void (*said)(const struct pipeline *p, char *msg, size_t size);
    size_t field;                   /* offsetof the knob's field in struct attention_config */
    size_t field_size;
    size_t field2;                  /* a second field it sets, or field again */
    size_t field2_size;
    /*
     * An on/off knob (a bool field) gives its texts instead of functions: on
     * and off on the bar, then what the view says after turning it on and
     * off.  A function in the row still takes precedence.
     */
    const char *flag_text[4];
};

/* The knob table: KNOB_COUNT rows. */
extern const struct knob knob_table[];

/*
 * A knob's behaviour, through its row's function or, for an on/off knob
 * without one, the generic one: parse and step as the row's parse and step
 * say, the bar's text (false: not on the bar now), the message after a
 * change.  Front ends call these, never the row's pointers.
 */
int knob_parse(const struct knob *k, struct attention_config *c, const char *option, const char *text,
               char *err, size_t size);
int knob_step(const struct knob *k, struct attention_config *c, int dir, const struct pipeline *p,
              char *msg, size_t size);
bool knob_bar(const struct knob *k, const struct pipeline *p, char *full, char *terse);

/*
 * The knobs of a trained model's writing (generate.h): a model's only, they
 * change no stage, only the tokens it writes next.
 */
#define KNOB_WRITING_SET                                                                     \
    (((uint64_t)1 << KNOB_SAMPLE_TEMPERATURE) | ((uint64_t)1 << KNOB_TOP_K) |                \
     ((uint64_t)1 << KNOB_TOP_P))
/*
 * The knobs a trained model has (its weights fix the rest): bits of enum
 * knob_id.  Its seed is the writing's generator's (torch.manual_seed before
 * the first token), the book's classes' the parameters'.
 */
#define KNOB_MODEL_SET                                                                     \
    (((uint64_t)1 << KNOB_MASK) | ((uint64_t)1 << KNOB_SCALE) | ((uint64_t)1 << KNOB_TEMPERATURE) | \
     ((uint64_t)1 << KNOB_SEED) | KNOB_WRITING_SET)

/*
 * Whether knob k means something for p: a trained model's knobs
 * (KNOB_MODEL_SET) for one, every other for the book's classes.
 */
bool knob_applies(const struct knob *k, const struct pipeline *p);
/* Why knob k does not apply to p, naming its option, into msg. */
void knob_refusal(const struct knob *k, const struct pipeline *p, char *msg, size_t size);
void knob_said(const struct knob *k, const struct pipeline *p, char *msg, size_t size);

/* The knob with key key (as key or key_back); *dir gets 1 or -1.  NULL: none. */
const struct knob *knob_for_key(int key, int *dir);

/*
 * Whether configurations a and b differ only in knobs whose recompute is at
 * most r (every other field of a and b equal).
 */
bool knob_differ_at_most(const struct attention_config *a, const struct attention_config *b,
                         enum knob_recompute r);

/* Parses a whole number from min to max for option (messages as every option's). */
int knob_parse_int(const char *option, const char *text, long min, long max, int *out, char *err,
                   size_t size);

#endif
