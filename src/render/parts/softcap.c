/*
 * softcap.c: the cap on the scaled scores (Gemma 2's attn_logit_softcapping,
 * computed by part_softmax) as every screen and output says it: its
 * formula, its sentence, a cell's arithmetic and --print's header words.
 * The scaled stage asks here first; on a model without a cap each of these
 * writes nothing and says so.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>

#include "render/parts/parts.h"

double
softcap_of(const struct pipeline *p)
{
    return p != NULL && p->decoder != NULL ? p->decoder->attn_softcap : 0.0;
}

bool
softcap_formula(const struct pipeline *p, const struct pipeline_scaling *sc, char *buf,
                size_t size)
{
    const double cap = softcap_of(p);

    if (cap <= 0.0 || sc->symbol == NULL)
        return false;
    /* (capped after the division, the hidden scores left -inf) */
    snprintf(buf, size, "%g tanh(w_ij / %s / %g) = %g tanh(w_ij / %.4g / %g)", cap, sc->symbol,
             cap, cap, (double)sc->divisor, cap);
    return true;
}

bool
softcap_text(const struct pipeline *p, char *buf, size_t size)
{
    const double cap = softcap_of(p);

    if (cap <= 0.0)
        return false;
    snprintf(buf, size,
             "Divided, then capped: %g tanh(x / %g) keeps every score between -%g and %g "
             "(Gemma 2's attn_logit_softcapping), so no key can take all the weight however "
             "well it matches. Hidden scores stay -inf.",
             cap, cap, cap, cap);
    return true;
}

bool
softcap_inspect(struct out *o, const struct cell_at *at, float masked, float scaled)
{
    const struct pipeline *p = at->p;
    const double cap = softcap_of(p);
    char a[24], b[24], c[24], d[24];

    if (cap <= 0.0 || isinf(masked))
        return false;
    emit(o, "scaled[%s][%s] = %s / %s = %s, capped: %g tanh(%s / %g) = %s\n",
         inspect_token(p, at->row), inspect_key(p, at->col), inspect_num(a, masked),
         inspect_num(b, p->st.divisor), inspect_num(d, masked / p->st.divisor), cap, d, cap,
         inspect_num(c, scaled));
    return true;
}

const char *
softcap_print(const struct pipeline *p, char *buf, size_t size)
{
    const double cap = softcap_of(p);

    buf[0] = '\0';
    if (cap > 0.0)
        snprintf(buf, size, ", then capped at %g (attn_logit_softcapping)", cap);
    return buf;
}
