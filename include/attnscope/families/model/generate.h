/*
 * generate.h: a trained model writing, one token after another, as the
 * book's generate writes (chapter 5, section 5.3):
 *
 *     for each new token:
 *         idx_cond = idx[:, -context_size:]      the last context_size tokens
 *         logits = model(idx_cond)[:, -1, :]     the last position's logits
 *         (top-k, temperature, softmax, multinomial: sample.h)
 *         if idx_next == eos_id: break
 *         idx = cat(idx, idx_next)
 *
 * The text is kept as token ids (what the model wrote is its own ids, which
 * its text would not always tokenize back to) and shown through a pipeline
 * like any other: each written token is a rebuild of the caller's pipeline
 * with one more id, which computes only the new row in every layer (the
 * rows before are the KV cache: every layer's keys and values, kept in the
 * run, decoder_forward_from), and hands back the new last logits.  When the
 * text outgrows the context the window slides as idx[:, -context_size:]
 * does: every position moves, so the whole window is computed again (a
 * learned position, or a rotation, cannot be moved in a cache), and the
 * step says so.
 *
 * The generator is torch.manual_seed(seed) set once before the first token,
 * as the book's examples do; every step keeps the generator's state before
 * its draw, so that taking a token back and writing again draws the same.
 */
#ifndef ATTNSCOPE_GENERATE_H
#define ATTNSCOPE_GENERATE_H

#include <stdbool.h>
#include <stdint.h>

#include "attnscope/decoder/sample.h"
#include "attnscope/models/model.h"
#include "attnscope/kernels/rng.h"
#include "attnscope/pipeline/pipeline.h"

/* The book's default seed (torch.manual_seed(123) before its examples). */
#define GENERATE_SEED 123

/* The most end tokens a writing stops at (a model's list: Llama 3's has three). */
#define GENERATE_EOS_MAX 8

/*
 * The tokens that stop the writing (the chosen one is not written): none,
 * the one --eos names, or the model's own (generation_config.json's
 * eos_token_id, which may be a list; a GGUF's eos and eot tokens).
 */
struct generate_end {
    int id[GENERATE_EOS_MAX];
    int n;          /* 0: none (the book's default) */
    char from[96];  /* what named them ("--eos", "generation_config.json's eos_token_id") */
};

struct generate_options {
    struct sample_options sample;
    uint64_t seed;          /* torch.manual_seed(seed) before the first token */
    struct generate_end end;
};

/* Greedy, the book's seed, no end token. */
void generate_options_init(struct generate_options *o);
/* e as the one token id (from: who named it), or none when id < 0. */
void generate_end_one(struct generate_end *e, int id, const char *from);
/* Whether id is one of e's. */
bool generate_end_has(const struct generate_end *e, int id);

/* One written token. */
struct generate_step {
    int position;               /* its index in the whole text (<|endoftext|> first counted) */
    struct sample_choice choice; /* what it was chosen from (choice.id is the token) */
    double seconds;             /* the forward that took it in (measured) */
    int computed;               /* the rows that forward computed: 1 with the cache, the
                                   whole window when it slid */
    bool slid;                  /* the window moved: the first token dropped, all recomputed */
    /*
     * Beside a second model (compare.h): the probability it gave this
     * token, reading the same text the writer chose it after; NAN: none.
     */
    float compared_prob;
};

struct generation {
    const struct model *model; /* borrowed */
    struct generate_options o;
    struct rng gen;
    int *ids;                  /* (n) the whole text: the prompt, then what was written */
    int n, cap;
    int prompt;                /* the prompt's tokens */
    bool bos;                  /* ids[0] is the <|endoftext|> the source put first */
    int first;                 /* the window the model reads: ids[first .. n) */
    int context;               /* the longest window: the model's n_ctx */
    int outputs;               /* the head's outputs (the vocabulary) */
    float *logits;             /* (outputs) the window's last position's logits */
    float *next_logits;        /* (outputs) a rebuild's, swapped in when it succeeds */
    float *work;               /* sample_choose's */
    struct generate_step *steps; /* (written) */
    struct rng *before;        /* (written + 1) the generator before each draw */
    int written;
    int room;                  /* rows of room a rebuild asks for (0: the run's default) */
    /* The last draw chose the end token: nothing more is written until it is taken back. */
    bool ended;
    struct sample_choice end;  /* that draw */
    /* The forward without the cache, measured (generation_measure_uncached). */
    double uncached_seconds;
    int uncached_n;
};

/*
 * Ready to write with model m under o (checked: sample_check names the
 * option, an end token outside the vocabulary is refused).  Nothing is
 * read yet; generation_begin takes the prompt.
 */
enum attn_status generation_init(struct generation *g, const struct model *m,
                                 const struct generate_options *o, struct attn_error *err);
void generation_destroy(struct generation *g);

/*
 * The prompt: p's tokens (p a pipeline of m, built from base).  p is
 * rebuilt with the last position's logits handed back (its last row only
 * computed again); on failure it is as it was.  room: the rows of room
 * the run gets for what will be written (0: the run's default).
 */
enum attn_status generation_begin(struct generation *g, struct pipeline *p,
                                  const struct attention_config *cfg,
                                  const struct pipeline_source *base, int room,
                                  struct attn_error *err);

/*
 * Writes one token: chooses it from the last logits, then rebuilds p with
 * it (base's other fields kept; the ids and the logits are the
 * generation's).  When the end token is chosen nothing is written:
 * *ended is set (and g->ended).  On failure (no memory, a stop asked for)
 * p, the text and the generator are as they were.
 */
enum attn_status generation_write(struct generation *g, struct pipeline *p,
                                  const struct attention_config *cfg,
                                  const struct pipeline_source *base, bool *ended,
                                  struct attn_error *err);

/*
 * Takes the last written token back (or the end token's draw): the text,
 * the generator and p as before it was written (p's last row computed
 * again, the rows before from the cache).  Fails with nothing written.
 */
enum attn_status generation_undo(struct generation *g, struct pipeline *p,
                                 const struct attention_config *cfg,
                                 const struct pipeline_source *base, struct attn_error *err);

/*
 * base with the generation's window: its ids, <|endoftext|> first only
 * while the window starts at it, the logits handed back, the layer p
 * shows.  What every rebuild of a written text is made from (a knob
 * changed, an ablation), so that the view keeps showing the ids.
 */
void generation_source(const struct generation *g, const struct pipeline_source *base,
                       const struct pipeline *p, struct pipeline_source *src);

/*
 * A second model's pipeline p (built from base with the writer's text)
 * brought to g's text as it is now: its window's ids, built again from
 * base, the rows it shares with the text before kept (decoder_forward_from);
 * g's logits are left as they are.  On failure p is as it was.
 */
enum attn_status generation_follow(const struct generation *g, struct pipeline *p,
                                   const struct attention_config *cfg,
                                   const struct pipeline_source *base, struct attn_error *err);

/*
 * The caller rebuilt its pipeline p from generation_source (a knob changed,
 * an ablation): the logits that rebuild handed back become the ones the
 * next token is chosen from, and p knows the writing it shows.
 */
void generation_rebuilt(struct generation *g, struct pipeline *p);

/*
 * Measures what the step would cost without the cache: the forward of
 * the whole window, every row and every position's logits (the book's
 * model(idx_cond) without a cache), timed, into g->uncached_seconds.
 */
enum attn_status generation_measure_uncached(struct generation *g, struct attn_error *err);

/*
 * The KV cache after n tokens, as a written token reads it.  A full layer
 * keeps every row; a sliding layer (decoder_window) only its window's last
 * rows, a ring of window slots: position i in slot i mod window, the
 * oldest overwritten (as Hugging Face's sliding-window cache and
 * llama.cpp's keep them), since no later query reads further back.
 */
/* The rows layer keeps after n tokens: n, or its window when it slides and n is past it. */
int generation_cache_rows(const struct decoder_config *c, int layer, int n);
/* The position held in slot `slot` (0 .. rows - 1) of layer's cache after n tokens. */
int generation_cache_position(const struct decoder_config *c, int layer, int n, int slot);
/* The cache's bytes after n tokens: keys and values, every layer's rows, float32. */
size_t generation_cache_bytes(const struct decoder_config *c, int n);
/* The same were every layer to keep every row (what the sliding layers' rings save). */
size_t generation_cache_bytes_full(const struct decoder_config *c, int n);

/*
 * The text's bytes, ids[from .. to) as the tokenizer spells them (a token
 * that is not bytes, a special one, as its display text; to -1: the end),
 * NUL-terminated; the caller frees it.  NULL when out of memory.
 */
char *generation_text(const struct generation *g, int from, int to);

#endif
