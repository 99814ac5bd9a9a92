/*
 * app_model.h: the tests' view of a trained model: the model at path
 * opened (o: its options, or NULL) and packed as the view packs it, the view made on sentence with three
 * next tokens a position.  Failures end the test.
 */
#ifndef ATTNSCOPE_TESTS_APP_MODEL_H
#define ATTNSCOPE_TESTS_APP_MODEL_H

#include <check.h>
#include <string.h>

#include "attnscope/families/model/family_model.h"
#include "attnscope/models/model.h"
#include "front/app/app.h"

static inline void
app_on_model(struct app *app, struct model *m, const char *path, const struct model_options *o,
             const char *sentence)
{
    struct attention_config cfg;
    struct attn_error err;
    struct pipeline_source src;

    ck_assert_msg(model_open(m, path, o, &err) == ATTN_OK, "%s: %s", path, err.msg);
    /* (as the view's main does: its weights packed, what it reads its own) */
    (void)family_model_pack_if_room(&m->dec);
    attention_config_init(&cfg);
    memset(&src, 0, sizeof src);
    src.sentence = sentence;
    src.family = &family_model;
    src.model = m;
    src.top = 3;
    ck_assert_msg(app_init(app, &cfg, &src, NULL, &err) == ATTN_OK, "%s", err.msg);
}

#endif
