/* sample.c: the next token as the book's generate chooses it (see sample.h). */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/decoder/sample.h"
#include "attnscope/kernels/cpu.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

enum attn_status
sample_check(const struct sample_options *o, int outputs, struct attn_error *err)
{
    if (!(o->temperature >= 0.0) || isinf(o->temperature))
        return attn_fail(err, ATTN_EVALUE,
                         "--sample-temperature %g: give 0 (the likeliest token) or a number "
                         "above 0",
                         o->temperature);
    if (o->top_k < 0 || o->top_k > outputs)
        return attn_fail(err, ATTN_EVALUE,
                         "--top-k %d: give 1 to the vocabulary's %d tokens (0: no cut)", o->top_k,
                         outputs);
    if (!(o->top_p > 0.0 && o->top_p <= 1.0))
        return attn_fail(err, ATTN_EVALUE, "--top-p %g: give a number above 0, at most 1 (1: no "
                                           "cut)",
                         o->top_p);
    return ATTN_OK;
}

/* Whether logit a (of token i) comes before b (of j): larger first, the lower id on a tie. */
static bool
before(float a, int i, float b, int j)
{
    return a > b || (a == b && i < j);
}

/* The k-th largest of v's n values (1-based), by quickselect over the scratch copy s. */
static float
kth_largest(const float *v, int n, int k, float *s)
{
    int lo = 0, hi = n - 1;
    const int want = k - 1;

    memcpy(s, v, (size_t)n * sizeof *s);
    while (lo < hi) {
        const float pivot = s[lo + (hi - lo) / 2];
        int i = lo, j = hi;
        while (i <= j) {
            while (s[i] > pivot)
                i++;
            while (s[j] < pivot)
                j--;
            if (i <= j) {
                const float t = s[i];
                s[i++] = s[j];
                s[j--] = t;
            }
        }
        if (want <= j)
            hi = j;
        else if (want >= i)
            lo = i;
        else
            break;
    }
    return s[want];
}

/*
 * exp(x) in float as PyTorch's AVX2 kernels compute it (SLEEF's expf_u10,
 * fused multiply-adds throughout): x = q ln 2 + s with ln 2 in two parts,
 * a degree-6 polynomial in s, then times 2^q.  Its constants are SLEEF's
 * published ones.  Not rowops_exp (Cephes' expf): a draw compares p / q
 * across the whole vocabulary, so every probability here is PyTorch's to
 * the bit (tests/golden/sample-draws.txt).
 */
static float
torch_expf(float d)
{
    const float q = nearbyintf(d * 1.442695040888963407359924681001892137f);
    float s = fmaf(q, -0.693145751953125f, d);
    float u = 0.000198527617612853646278381f;

    if (d < -104.0f)
        return 0.0f;
    if (d > 100.0f)
        return INFINITY;
    s = fmaf(q, -1.428606765330187045e-06f, s);
    u = fmaf(u, s, 0.00139304355252534151077271f);
    u = fmaf(u, s, 0.00833336077630519866943359f);
    u = fmaf(u, s, 0.0416664853692054748535156f);
    u = fmaf(u, s, 0.166666671633720397949219f);
    u = fmaf(u, s, 0.5f);
    u = 1.0f + fmaf(s * s, u, s);
    if (q >= -126.0f && q <= 127.0f) {
        /* times 2^q made from its bits: exact, so the same as ldexpf, without the call */
        const uint32_t bits = (uint32_t)((int)q + 127) << 23;
        float scale;
        memcpy(&scale, &bits, sizeof scale);
        return u * scale;
    }
    return ldexpf(u, (int)q);
}

#if defined(__x86_64__)
/*
 * torch_expf(x[i] - max) for eight entries at once, lane for lane the
 * scalar code's operations (AVX2's own rounding, multiplies and fused
 * multiply-adds give the same bits); below -104 (a cut's -inf) the scalar
 * code's 0, and a block with an entry between -104 and -87 (a result that
 * is subnormal) made by the scalar code.
 */
__attribute__((target("avx2,fma"))) static void
torch_expf8(const float *x, float max, float *p)
{
    const __m256 d = _mm256_sub_ps(_mm256_loadu_ps(x), _mm256_set1_ps(max));
    const __m256 q = _mm256_round_ps(_mm256_mul_ps(d, _mm256_set1_ps(1.442695040888963407359924681001892137f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 s = _mm256_fmadd_ps(q, _mm256_set1_ps(-0.693145751953125f), d);
    __m256 u = _mm256_set1_ps(0.000198527617612853646278381f);
    __m256i bits;

    const __m256 zero = _mm256_cmp_ps(d, _mm256_set1_ps(-104.0f), _CMP_LT_OQ); /* (-inf: cut) */

    if (_mm256_movemask_ps(_mm256_andnot_ps(zero, _mm256_cmp_ps(d, _mm256_set1_ps(-87.0f),
                                                                _CMP_NGE_UQ))) != 0) {
        for (int i = 0; i < 8; i++)
            p[i] = torch_expf(x[i] - max);
        return;
    }
    s = _mm256_fmadd_ps(q, _mm256_set1_ps(-1.428606765330187045e-06f), s);
    u = _mm256_fmadd_ps(u, s, _mm256_set1_ps(0.00139304355252534151077271f));
    u = _mm256_fmadd_ps(u, s, _mm256_set1_ps(0.00833336077630519866943359f));
    u = _mm256_fmadd_ps(u, s, _mm256_set1_ps(0.0416664853692054748535156f));
    u = _mm256_fmadd_ps(u, s, _mm256_set1_ps(0.166666671633720397949219f));
    u = _mm256_fmadd_ps(u, s, _mm256_set1_ps(0.5f));
    u = _mm256_add_ps(_mm256_set1_ps(1.0f), _mm256_fmadd_ps(_mm256_mul_ps(s, s), u, s));
    /* q is -126 .. 0 here: 2^q from its bits, an exact scaling; below -104 the scalar's 0 */
    bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(q), _mm256_set1_epi32(127)), 23);
    _mm256_storeu_ps(p, _mm256_andnot_ps(zero, _mm256_mul_ps(u, _mm256_castsi256_ps(bits))));
}

/* lane[0 .. 8) += p[0 .. 8) */
__attribute__((target("avx2"))) static void
add_lanes8(float *lane, const float *p)
{
    _mm256_storeu_ps(lane, _mm256_add_ps(_mm256_loadu_ps(lane), _mm256_loadu_ps(p)));
}
#endif

/*
 * torch.softmax of a float32 row at the AVX2 capability: the largest, each
 * exp(x - max), their sum in eight lanes (entry i in lane i mod 8) folded
 * in halves (lanes 0-3 plus 4-7, then 0-1 plus 2-3, then 0 plus 1), one
 * reciprocal, each times it.  Checked bit for bit against PyTorch 1.13.
 */
static void
softmax_row(const float *x, int n, float *p)
{
    float max = -INFINITY;
    float lane[8] = { 0 };
    float inv;

    int i = 0;

    for (int j = 0; j < n; j++)
        max = x[j] > max ? x[j] : max;
#if defined(__x86_64__)
    if (cpu_isa() >= CPU_AVX2)
        for (; i + 8 <= n; i += 8) {
            torch_expf8(x + i, max, p + i);
            add_lanes8(lane, p + i);
        }
#endif
    for (; i < n; i++) {
        p[i] = torch_expf(x[i] - max);
        lane[i % 8] += p[i];
    }
    for (int width = 4; width >= 1; width /= 2)
        for (int l = 0; l < width; l++)
            lane[l] = lane[l] + lane[l + width];
    inv = 1.0f / lane[0];
    for (int j = 0; j < n; j++)
        p[j] *= inv;
}

/*
 * order (n ids) sorted by key ascending, the lower id first on a tie: a
 * bottom-up merge sort (stable, so ids that start in order stay so among
 * equals), tmp room for n more.
 */
static void
sort_ascending(int *order, int *tmp, int n, const float *key)
{
    int *from = order, *to = tmp;

    for (int width = 1; width < n; width *= 2) {
        for (int lo = 0; lo < n; lo += 2 * width) {
            const int mid = lo + width < n ? lo + width : n;
            const int hi = lo + 2 * width < n ? lo + 2 * width : n;
            int i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                to[k++] = key[from[j]] < key[from[i]] ? from[j++] : from[i++];
            while (i < mid)
                to[k++] = from[i++];
            while (j < hi)
                to[k++] = from[j++];
        }
        int *t = from;
        from = to;
        to = t;
    }
    if (from != order)
        memcpy(order, from, (size_t)n * sizeof *order);
}

/*
 * Hugging Face's TopPLogitsWarper on x: sorted ascending, the softmax of
 * the sorted row summed in that order (torch.cumsum), every token whose running sum is at
 * most 1 - p cut to -inf but the likeliest; the sum the cut stopped at
 * into *stop.  order is room for n ints, p for n floats.
 */
static void
top_p_cut(float *x, int n, double top_p, int *order, float *p, float *stop)
{
    const float limit = (float)(1.0 - top_p);
    double sorted_sum = 0.0; /* torch.cumsum of float32 adds in double, stores float */
    float *sorted = p;

    for (int i = 0; i < n; i++)
        order[i] = i;
    sort_ascending(order, (int *)p, n, x); /* (p is free until the sorted row goes there) */
    for (int i = 0; i < n; i++)
        sorted[i] = x[order[i]];
    softmax_row(sorted, n, sorted);
    *stop = 0.0f;
    for (int i = 0; i < n - 1; i++) {
        sorted_sum += sorted[i];
        if (!((float)sorted_sum <= limit))
            break;
        *stop = (float)sorted_sum;
        x[order[i]] = -INFINITY;
    }
}

/* c's shown list: the SAMPLE_SHOWN largest logits, likeliest first (the lower id on a tie). */
static void
likeliest(const float *logits, int n, struct sample_choice *c)
{
    for (int i = 0; i < n; i++) {
        int at;
        if (c->shown == SAMPLE_SHOWN &&
            !before(logits[i], i, logits[c->top_ids[SAMPLE_SHOWN - 1]], c->top_ids[SAMPLE_SHOWN - 1]))
            continue;
        at = c->shown < SAMPLE_SHOWN ? c->shown++ : SAMPLE_SHOWN - 1;
        while (at > 0 && before(logits[i], i, logits[c->top_ids[at - 1]], c->top_ids[at - 1])) {
            c->top_ids[at] = c->top_ids[at - 1];
            at--;
        }
        c->top_ids[at] = i;
    }
}

enum attn_status
sample_choose(const struct sample_options *o, struct rng *gen, const float *logits, int n,
              float *work, struct sample_choice *c, struct attn_error *err)
{
    float *x = work;          /* the logits as cut and tempered */
    float *p = work + n;      /* the probabilities drawn from */
    int *order = (int *)(work + 2 * (size_t)n);
    float *draws = work + 2 * (size_t)n; /* (after the top-p cut) each entry's Exp(1) */
    const bool sampling = o->temperature > 0.0;
    const bool cut = o->top_k > 0 && o->top_k < n;
    float *plain = draws; /* (once the draw is done) the plain probabilities */
    int chosen = 0;

    memset(c, 0, sizeof *c);
    c->cut_logit = -INFINITY;
    for (int i = 0; i < n; i++)
        if (isnan(logits[i]) || logits[i] == INFINITY)
            return attn_fail(err, ATTN_EVALUE,
                             "logit %d of %d is %g: the model's numbers have overflowed, there "
                             "is nothing to draw from",
                             i, n, (double)logits[i]);
    likeliest(logits, n, c);
    memcpy(x, logits, (size_t)n * sizeof *x);
    if (cut) {
        c->cut_logit = kth_largest(logits, n, o->top_k, p);
        for (int i = 0; i < n; i++)
            if (x[i] < c->cut_logit)
                x[i] = -INFINITY;
    }
    if (sampling) {
        const float t = (float)o->temperature;
        float most = -INFINITY;
        bool overflowed = false;
        for (int i = 0; i < n; i++) {
            const bool kept = x[i] != -INFINITY;
            most = kept && x[i] > most ? x[i] : most;
            x[i] = x[i] / t;
            overflowed = overflowed || (kept && !isfinite(x[i]));
        }
        if (overflowed) {
            /*
             * A temperature so small that logits / T leave float (1e-38; or
             * 1e-300, 0 as a float): the softmax would be inf - inf, NaN, and
             * torch.multinomial refuses it.  The formula's limit as T goes
             * to 0 is every probability on the largest kept logit (shared
             * evenly by a tie): that row is drawn from.
             */
            for (int i = 0; i < n; i++)
                x[i] = logits[i] == most ? 0.0f : -INFINITY;
            c->at_limit = true;
        }
        if (o->top_p < 1.0)
            top_p_cut(x, n, o->top_p, order, p, &c->cut_prob);
    }
    softmax_row(x, n, p);
    if (sampling) {
        /* torch.multinomial(probs, 1): an Exp(1) draw per entry, the first largest p / q. */
        for (int i = 0; i < n; i++) {
            const float q = (float)(-log(1.0 - rng_uniform_f64(gen)));
            const float ratio = p[i] / q;
            draws[i] = q;
            if (i == 0 || ratio > c->ratio) {
                c->ratio = ratio;
                c->q = q;
                chosen = i;
            }
        }
    } else {
        /* torch.argmax: the first largest of the (cut) logits. */
        for (int i = 1; i < n; i++)
            if (x[i] > x[chosen])
                chosen = i;
    }
    /*
     * What the choice is shown with: the plain probabilities (torch.softmax
     * of the logits as they are: the row drawn from when nothing was cut or
     * tempered) and the ranks.
     */
    for (int s = 0; s < c->shown; s++)
        c->top_q[s] = sampling ? draws[c->top_ids[s]] : 0.0f;
    if (!cut && (!sampling || (o->temperature == 1.0 && o->top_p >= 1.0)))
        plain = p;
    else
        softmax_row(logits, n, plain);
    c->id = chosen;
    c->logit = logits[chosen];
    c->prob_plain = plain[chosen];
    c->prob = p[chosen];
    for (int i = 0; i < n; i++) {
        const bool kept = x[i] != -INFINITY;
        c->kept += kept;
        c->rank += before(logits[i], i, logits[chosen], chosen);
        c->rank_kept += kept && before(x[i], i, x[chosen], chosen);
    }
    for (int s = 0; s < c->shown; s++) {
        const int id = c->top_ids[s];
        c->top_plain[s] = plain[id];
        c->top_prob[s] = p[id];
    }
    return ATTN_OK;
}
