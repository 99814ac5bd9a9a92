/* mixer.c: the table of what mixes the tokens in a layer (see mixer.h). */
#include "config.h"

#include <stddef.h>

#include "attnscope/decoder/decoder.h"
#include "attnscope/decoder/mixer.h"

/* Softmax attention keeps every key and value row it will read again (a ring for a window). */
static size_t
attention_kept(const struct decoder_config *c, int layer, int n)
{
    /* (a layer that shares keys and values keeps none of its own) */
    return decoder_kv_source(c, layer) != layer
               ? 0
               : 2 * (size_t)decoder_kept_rows(c, layer, n) *
                     (size_t)decoder_layer_kv_width(c, layer);
}

static const struct decoder_mixer attention = {
    "attention", "keys and values", part_attention, attention_kept, true, false, false, NULL, NULL,
};

static const struct decoder_mixer *mixers[DECODER_MIXERS_MAX] = { &attention,
                                                                   &decoder_mixer_gdn };
static int mixer_count = 2;

const struct decoder_mixer *
decoder_mixer(int id)
{
    return id >= 0 && id < mixer_count ? mixers[id] : NULL;
}

const struct decoder_mixer *
decoder_mixer_of(const struct decoder_config *c, int layer)
{
    const struct decoder_mixer *m =
        layer >= 0 && layer < DECODER_LAYERS_SLIDING_MAX ? decoder_mixer(c->mixer[layer]) : NULL;

    return m != NULL ? m : &attention;
}

int
decoder_mixer_add(const struct decoder_mixer *m)
{
    if (mixer_count == DECODER_MIXERS_MAX || m == NULL || m->forward == NULL ||
        m->kept_floats == NULL)
        return -1;
    mixers[mixer_count] = m;
    return mixer_count++;
}
