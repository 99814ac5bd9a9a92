/*
 * deltarule.h: one token's step of the gated delta rule on one head's
 * state, the recurrence a Gated DeltaNet layer runs (decoder/gdn.c).
 *
 * S is k_dim rows of v_dim.  The step decays S by decay, reads mem = S^T k,
 * makes delta = (v - mem) beta, adds k delta^T to S and reads o = S^T q.
 * Each of o's and mem's columns adds its k_dim terms in row order, and
 * every product and sum is rounded on its own (no fused multiply-add), so
 * every instruction set gives the bits of the column-at-a-time recurrence
 * Hugging Face's torch_recurrent_gated_delta_rule writes.
 */
#ifndef ATTNSCOPE_DELTARULE_H
#define ATTNSCOPE_DELTARULE_H

/*
 * S (dk x dv) in place; o (dv) the read; delta (dv) scratch, left holding
 * delta.  q and k are dk long, v dv long.  No two of S, o and delta may
 * overlap, nor any of them q, k or v.
 */
void deltarule_step(float *S, float *o, float *delta, const float *q, const float *k,
                    const float *v, float decay, float beta, int dk, int dv);

#endif
