/* families.c: the model families attnscope has (see family.h). */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "attnscope/pipeline/family.h"
#include "attnscope/pipeline/pipeline.h"

const struct family *const families[] = { &family_book, &family_model, NULL };

const struct family *
family_find(const char *name)
{
    for (size_t i = 0; families[i] != NULL; i++)
        if (strcmp(families[i]->name, name) == 0)
            return families[i];
    return NULL;
}

/* A source that names no family is the book's classes: only the registry knows them by name. */
static const struct family *
family_of(const struct pipeline_source *src)
{
    return src->family != NULL ? src->family : &family_book;
}

enum attn_status
pipeline_create(struct pipeline *p, const struct attention_config *cfg,
                const struct pipeline_source *src, struct attn_error *err)
{
    return pipeline_create_as(p, family_of(src), cfg, src, err);
}

enum attn_status
pipeline_rebuild(struct pipeline *p, struct pipeline *prev, const struct attention_config *cfg,
                 const struct pipeline_source *src, struct attn_error *err)
{
    return pipeline_rebuild_as(p, prev, family_of(src), cfg, src, err);
}
