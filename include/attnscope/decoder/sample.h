/*
 * sample.h: the next token chosen from a row of logits as the book's
 * generate chooses it (chapter 5, section 5.3), bit for bit where PyTorch's
 * arithmetic allows.
 *
 *   top_k:        torch.topk, then every logit below the k-th set to -inf
 *                 (ties with the k-th kept, as torch.where(logits < min_val)
 *                 keeps them);
 *   temperature:  0 is greedy, torch.argmax of the (cut) logits: the first
 *                 largest; above 0 the logits divided by it (in float32,
 *                 as a float tensor divided by a Python float is);
 *   top_p:        beyond the book, Hugging Face's TopPLogitsWarper on the
 *                 tempered logits (sorted ascending, their softmax summed
 *                 in that order; those whose running sum is at most 1 - p
 *                 cut, the likeliest always kept);
 *   the draw:     softmax, then torch.multinomial(probs, 1), which on the
 *                 CPU draws one Exp(1) value per vocabulary entry, q_i =
 *                 -log(1 - u_i) with u_i PyTorch's 53-bit uniform double,
 *                 as float, and picks the first largest p_i / q_i.
 *
 * The generator is the caller's (rng.h: torch.manual_seed(seed) once before
 * generating, as the book does); greedy draws nothing from it.
 */
#ifndef ATTNSCOPE_SAMPLE_H
#define ATTNSCOPE_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>

#include "attnscope/base/status.h"
#include "attnscope/kernels/rng.h"

struct sample_options {
    double temperature; /* 0: greedy */
    int top_k;          /* 0: no cut */
    double top_p;       /* 1: no cut; otherwise in (0, 1) */
};

/* The likeliest tokens a choice is shown with. */
#define SAMPLE_SHOWN 8

/* What one choice was made from, and what it chose: what --print and the view show. */
struct sample_choice {
    int id;            /* the token chosen */
    float logit;       /* its logit */
    float prob_plain;  /* its probability from the logits as they are (temperature 1, no cut) */
    float prob;        /* its probability after the cuts and temperature (greedy: after the
                          cuts, at temperature 1), as PyTorch's softmax gives it */
    int rank;          /* its rank among every logit, 0 the largest */
    int rank_kept;     /* among the tokens the cuts kept */
    int kept;          /* how many tokens the cuts kept (every one without a cut) */
    float q;           /* its Exp(1) draw (sampling), 0 when greedy */
    float ratio;       /* p / q, the largest of them all (sampling), 0 when greedy */
    float cut_logit;   /* top-k's k-th logit (what stays is at or above it), or -inf */
    float cut_prob;    /* top-p's: the running sum the cut stopped at, or 0 */
    /*
     * The temperature was so small that logits / T overflowed float: drawn
     * from the formula's limit, the largest kept logit (or its ties) alone.
     */
    bool at_limit;
    /* The likeliest SAMPLE_SHOWN before the cuts, likeliest first. */
    int shown;
    int top_ids[SAMPLE_SHOWN];
    float top_plain[SAMPLE_SHOWN];  /* at temperature 1, no cut */
    float top_prob[SAMPLE_SHOWN];   /* as drawn: after the cuts and temperature (0: cut) */
    float top_q[SAMPLE_SHOWN];      /* their Exp(1) draws (sampling) */
};

/* Whether o's values are ones the book's generate takes; else err names the option. */
enum attn_status sample_check(const struct sample_options *o, int outputs,
                              struct attn_error *err);

/*
 * The next token from n logits under o, drawing from gen when sampling;
 * work is room for 3 n floats, and holds after the call the probabilities
 * drawn from (after the cuts and the temperature) at work[n .. 2n).  c says
 * what was chosen and why.  Fails
 * (drawing nothing) on a row with a NaN or +inf logit, as torch.multinomial
 * refuses its probabilities.
 */
enum attn_status sample_choose(const struct sample_options *o, struct rng *gen,
                               const float *logits, int n, float *work, struct sample_choice *c,
                               struct attn_error *err);

#endif
