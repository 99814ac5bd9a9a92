/*
 * check_pipeline_seams.c: the pipeline past the book's tables: what a
 * rebuild or a re-attend takes over computes what a fresh pipeline does,
 * memory counted before it is allocated, cross-attention, the stage table,
 * two pipelines in two threads, a family plugged in through the seam.
 */
#include "config.h"

#include "pipeline_harness.h"

#define TOL 1e-6

/* Every stage buffer of a and b, bit for bit. */
static void
expect_same_stages(const struct pipeline *a, const struct pipeline *b, const char *what)
{
    const struct attention_stages *x = &a->st;
    const struct attention_stages *y = &b->st;
    const size_t hh = (size_t)x->shape.heads * (size_t)x->nq * (size_t)x->nk;

    ck_assert_msg(x->nq == y->nq && x->shape.heads == y->shape.heads, "%s: shapes differ", what);
    ck_assert_msg(memcmp(x->queries.data, y->queries.data, matrix_size(&x->queries) * 4) == 0, "%s: queries", what);
    ck_assert_msg(memcmp(x->values.data, y->values.data, matrix_size(&x->values) * 4) == 0, "%s: values", what);
    ck_assert_msg(memcmp(x->scores, y->scores, hh * 4) == 0, "%s: scores", what);
    ck_assert_msg(memcmp(x->masked, y->masked, hh * 4) == 0, "%s: masked", what);
    ck_assert_msg(memcmp(x->scaled, y->scaled, hh * 4) == 0, "%s: scaled", what);
    ck_assert_msg(memcmp(x->weights, y->weights, hh * 4) == 0, "%s: weights", what);
    ck_assert_msg(memcmp(x->dropped, y->dropped, hh * 4) == 0, "%s: dropped", what);
    ck_assert_msg(memcmp(x->output.data, y->output.data, matrix_size(&x->output) * 4) == 0, "%s: output", what);
}


START_TEST(learned_positions_come_after_the_weights)
{
    struct attention_config cfg;
    struct pipeline off;
    struct pipeline on;
    struct pipeline rebuilt;
    struct pipeline fresh;
    struct pipeline_source src = { .sentence = "Your journey ends", .vocab = &book_vocab };
    struct attn_error err;

    attention_config_init(&cfg);
    cfg.dropout = 0.5;
    run(&off, &cfg, "Your journey starts with one step", &book_vocab);
    cfg.positional = true;
    cfg.positional_learned = true;
    run(&on, &cfg, "Your journey starts with one step", &book_vocab);
    ck_assert_int_eq(on.params.count, off.params.count);
    for (int i = 0; i < on.params.count; i++)
        ck_assert(memcmp(on.params.p[i].m.data, off.params.p[i].m.data,
                         matrix_size(&on.params.p[i].m) * sizeof(float)) == 0);
    /* torch.manual_seed(123); MultiHeadAttention(3, 2, ...); nn.Embedding(6, 3).weight[0][0] */
    ck_assert_float_eq_tol(MAT_AT(&on.positional, 0, 0), -0.1606f, 5e-5f);
    ck_assert_float_eq(MAT_AT(&on.inputs, 1, 2), MAT_AT(&on.embeddings, 1, 2) + MAT_AT(&on.positional, 1, 2));
    ck_assert(memcmp(on.st.dropped, off.st.dropped,
                     (size_t)on.st.shape.heads * (size_t)on.st.nq * (size_t)on.st.nk * 4) != 0);
    ck_assert_msg(pipeline_rebuild(&rebuilt, &on, &cfg, &src, &err) == ATTN_OK, "%s", err.msg);
    run(&fresh, &cfg, "Your journey ends", &book_vocab);
    ck_assert_int_eq(rebuilt.positional.rows, 3);
    ck_assert(memcmp(rebuilt.positional.data, fresh.positional.data, 9 * sizeof(float)) == 0);
    expect_same_stages(&rebuilt, &fresh, "learned positions after an edit");
    pipeline_destroy(&fresh);
    pipeline_destroy(&rebuilt);
    pipeline_destroy(&on);
    pipeline_destroy(&off);
}
END_TEST

START_TEST(shortcuts_compute_what_a_fresh_pipeline_computes)
{
    /* Recomputing only the attention, taking over the parameters, and
     * re-projecting only edited tokens must give the bits of a new pipeline. */
    static const char *const sentences[] = {
        "Your journey starts with one step",
        "Your journey starts with one giant step",
        "Your journey ends",
        "Your journey starts with one step and another",
    };
    struct attention_config cfg;
    struct attention_config next;
    struct pipeline cur;
    struct pipeline fresh;
    struct pipeline rebuilt;
    struct pipeline_source src = { .sentence = sentences[0], .vocab = &book_vocab };
    struct attn_error err;

    attention_config_init(&cfg);
    cfg.d_out = 8;
    cfg.heads = 2;
    run(&cur, &cfg, sentences[0], &book_vocab);

    /* Attention-only knobs, in place, one after another. */
    for (int step = 0; step < 6; step++) {
        next = cur.cfg;
        switch (step) {
        case 0: next.mask = ATTN_MASK_NONE; break;
        case 1: next.temperature = 0.5; break;
        case 2: next.dropout = 0.3; break;
        case 3: next.rng_path = RNG_PATH_MKL; next.dropout_pass = 2; break;
        case 4: next.scale = false; next.train = false; break;
        default: next.mask = ATTN_MASK_CAUSAL; next.dropout = 0.0; next.scale = true; break;
        }
        ck_assert(pipeline_attend_only(&cur, &next));
        ck_assert_msg(pipeline_reattend(&cur, &next, &err) == ATTN_OK, "%s", err.msg);
        run(&fresh, &next, sentences[0], &book_vocab);
        expect_same_stages(&cur, &fresh, "reattend");
        pipeline_destroy(&fresh);
    }
    next = cur.cfg;
    next.seed = 7;
    ck_assert(!pipeline_attend_only(&cur, &next));

    /* Sentence edits keep the parameters and the unchanged rows of Q, K, V. */
    for (int k = 1; k < 4; k++) {
        src.sentence = sentences[k];
        ck_assert_msg(pipeline_rebuild(&rebuilt, &cur, &cur.cfg, &src, &err) == ATTN_OK, "%s", err.msg);
        ck_assert_ptr_null(cur.params.p); /* taken over */
        run(&fresh, &cur.cfg, sentences[k], &book_vocab);
        expect_same_stages(&rebuilt, &fresh, sentences[k]);
        pipeline_destroy(&fresh);
        pipeline_destroy(&cur);
        cur = rebuilt;
    }

    /* A new seed cannot take the parameters over: they are drawn again. */
    next = cur.cfg;
    next.seed = 99;
    ck_assert_int_eq(pipeline_rebuild(&rebuilt, &cur, &next, &src, &err), ATTN_OK);
    ck_assert_ptr_nonnull(cur.params.p);
    run(&fresh, &next, sentences[3], &book_vocab);
    expect_same_stages(&rebuilt, &fresh, "new seed");
    pipeline_destroy(&fresh);
    pipeline_destroy(&rebuilt);

    /* A failing rebuild leaves the previous pipeline whole. */
    src.sentence = "   ";
    ck_assert_int_ne(pipeline_rebuild(&rebuilt, &cur, &cur.cfg, &src, &err), ATTN_OK);
    ck_assert_ptr_nonnull(cur.params.p);
    pipeline_destroy(&cur);
}
END_TEST

/* One cross-attention pipeline: the target's queries, the source's keys and values. */
static enum attn_status
cross(struct pipeline *p, const struct attention_config *cfg, const char *target, const char *source,
      const struct vocab *source_vocab, struct attn_error *err)
{
    struct pipeline_source src = {
        .sentence = target,
        .vocab = &book_vocab,
        .source = source,
        .source_vocab = source_vocab,
    };

    return pipeline_create(p, cfg, &src, err);
}

/* The memory a configuration holds, as allocated: parameters (and their packed copies), inputs, stage buffers. */
static size_t
allocated(const struct pipeline *p)
{
    size_t floats = matrix_size(&p->embeddings) + matrix_size(&p->inputs) +
                    matrix_size(&p->positional) + matrix_size(&p->source);

    for (int i = 0; i < p->params.count; i++) {
        const struct linalg_packed *pk = &p->params.p[i].packed;
        floats += matrix_size(&p->params.p[i].m);
        if (pk->data != NULL) /* the copy the GEMM kernel reads */
            floats += linalg_pack_floats(pk->n, pk->k);
    }
    return floats * sizeof(float) + attention_stages_bytes(&p->cfg, p->d_in, p->st.nq, p->st.nk);
}

/* The estimate made before allocating is what is then allocated, for every variant (W17). */
START_TEST(the_memory_estimate_is_what_is_allocated)
{
    for (int v = 0; v < ATTN_VARIANT_COUNT; v++) {
        for (int bias = 0; bias < 2; bias++) {
            struct attention_config cfg;
            struct pipeline p;
            attention_config_init(&cfg);
            attention_config_set_variant(&cfg, (enum attn_variant)v);
            cfg.qkv_bias = bias;
            cfg.positional = bias;
            cfg.dropout = 0.1 * bias;
            if (attention_variant_info(cfg.variant)->heads) {
                cfg.d_out = 4;
                /* notes and nn-mha: heads divide d_in (3) */
                cfg.heads = attention_variant_splits_d_in(cfg.variant) ? 3 : 2;
            }
            run(&p, &cfg, "Your journey starts with one step", &book_vocab);
            ck_assert_msg(p.bytes == allocated(&p), "variant %d bias %d: estimated %zu, allocated %zu",
                          v, bias, p.bytes, allocated(&p));
            ck_assert_uint_gt(p.bytes, 0);
            pipeline_destroy(&p);
            /* Across sentences (with weights), the source's inputs count too. */
            if (attention_variant_has_weights(cfg.variant)) {
                struct attn_error err;
                cfg.cross = true;
                attention_config_set_variant(&cfg, cfg.variant);
                cfg.positional_learned = false;
                ck_assert_msg(cross(&p, &cfg, "with one step", "Your journey starts with", NULL, &err) ==
                                  ATTN_OK, "%s", err.msg);
                ck_assert_msg(p.bytes == allocated(&p), "variant %d across: estimated %zu, allocated %zu",
                              v, p.bytes, allocated(&p));
                pipeline_destroy(&p);
            }
        }
    }
}
END_TEST

/* Past the limit: refused before allocating, alone or beside the pipeline it replaces. */
START_TEST(memory_past_the_limit_is_refused_before_allocating)
{
    static char sentence[4096 * 2];
    struct attention_config cfg;
    struct attention_config next;
    struct pipeline p;
    struct pipeline q;
    struct pipeline_source src = { .sentence = sentence, .vocab = &book_vocab };
    struct attn_error err;

    words_of_a(sentence, 4096);
    attention_config_init(&cfg);
    attention_config_set_variant(&cfg, ATTN_WRAPPER);
    cfg.d_out = 1;
    cfg.heads = 256; /* 4096 x 4096 weights in 256 heads: tens of GiB */
#if !defined(__SANITIZE_ADDRESS__)
    {
        /* With 256 MiB more address space any allocation of that size would fail first. */
        struct rlimit was;
        struct rlimit small;
        ck_assert_int_eq(getrlimit(RLIMIT_AS, &was), 0);
        small = was;
        small.rlim_cur = test_address_space() + ((rlim_t)256 << 20);
        ck_assert_int_eq(setrlimit(RLIMIT_AS, &small), 0);
        ck_assert_int_eq(pipeline_create(&p, &cfg, &src, &err), ATTN_ELIMIT);
        ck_assert_int_eq(setrlimit(RLIMIT_AS, &was), 0);
    }
#endif
    ck_assert_int_eq(pipeline_create(&p, &cfg, &src, &err), ATTN_ELIMIT);
    ck_assert_msg(strstr(err.msg, "MiB (parameters, inputs and stage buffers); attnscope's limit is "
                                  "2048 MiB") != NULL,
                  "%s", err.msg);

    /* Beside the pipeline shown: the two together are counted. */
    attention_config_init(&cfg);
    run(&p, &cfg, "Your journey starts with one step", &book_vocab);
    p.bytes = PIPELINE_MAX_BYTES - 100; /* as if it held nearly all of it */
    next = cfg;
    next.d_out = 4;
    ck_assert_int_eq(pipeline_rebuild(&q, &p, &next, &(struct pipeline_source){ .sentence = "Your journey", .vocab = &book_vocab }, &err),
                     ATTN_ELIMIT);
    ck_assert_msg(strstr(err.msg, "beside the 2047 MiB of the one shown") != NULL, "%s", err.msg);
    /* A knob that makes new stage buffers counts them beside the old ones. */
    next = cfg;
    next.mask = ATTN_MASK_NONE;
    ck_assert(pipeline_attend_only(&p, &next));
    ck_assert_int_eq(pipeline_reattend(&p, &next, &err), ATTN_ELIMIT);
    ck_assert_msg(strstr(err.msg, "beside the 2047 MiB shown") != NULL, "%s", err.msg);
    /* One that reuses them allocates nothing: allowed. */
    next = cfg;
    next.temperature = 2.0; /* d_k 1 with T = 1 shares the scaled buffer; T = 2 needs its own */
    ck_assert_int_eq(pipeline_reattend(&p, &next, &err), ATTN_ELIMIT);
    next = cfg;
    next.dropout_pass = 3; /* no dropout in this configuration: the same buffers */
    ck_assert_msg(pipeline_reattend(&p, &next, &err) == ATTN_OK, "%s", err.msg);
    pipeline_destroy(&p);
}
END_TEST

START_TEST(bad_configurations_are_refused)
{
    struct attention_config cfg;
    struct pipeline p;
    struct pipeline_source src = { .sentence = "Your journey", .vocab = &book_vocab };
    struct attn_error err;

    attention_config_init(&cfg);
    cfg.d_out = 3;
    ck_assert_int_eq(pipeline_create(&p, &cfg, &src, &err), ATTN_EVALUE);
    ck_assert_msg(strstr(err.msg, "--heads 2 does not divide --d-out 3") != NULL, "%s", err.msg);

    attention_config_init(&cfg);
    cfg.dropout = 1.0;
    ck_assert_int_eq(pipeline_create(&p, &cfg, &src, &err), ATTN_EVALUE);
    ck_assert_msg(strstr(err.msg, "--dropout") != NULL, "%s", err.msg);

    attention_config_init(&cfg);
    src.sentence = "   ";
    ck_assert_int_eq(pipeline_create(&p, &cfg, &src, &err), ATTN_EVALUE);
    ck_assert_msg(strstr(err.msg, "empty") != NULL, "%s", err.msg);
}
END_TEST

/* The stage table: names round-trip, each stage's numbers are where the stage says. */
/*
 * Across sentences: T x S weights, rows the target's tokens and columns the
 * source's; K and V are the source's projections with the same weights (so
 * they are the rows self-attention on the source has), Q the target's.
 */
START_TEST(cross_attention_takes_keys_and_values_from_the_source)
{
    static const enum attn_variant variants[] = { ATTN_V1, ATTN_V2, ATTN_CAUSAL, ATTN_WRAPPER,
                                                  ATTN_MHA, ATTN_NOTES, ATTN_NN_MHA };
    struct attn_error err;

    for (size_t k = 0; k < sizeof variants / sizeof variants[0]; k++) {
        struct attention_config cfg;
        struct pipeline p;
        struct pipeline on_source;
        struct pipeline on_target;
        struct pipeline_view v;
        attention_config_init(&cfg);
        cfg.cross = true;
        attention_config_set_variant(&cfg, variants[k]);
        cfg.heads = attention_variant_splits_d_in(cfg.variant) ? 3 : 2;
        cfg.d_out = 4;
        ck_assert_int_eq(cfg.mask, ATTN_MASK_NONE); /* none across sentences, whatever the class */
        ck_assert_msg(cross(&p, &cfg, "with one step", "Your journey starts with one", NULL, &err) ==
                          ATTN_OK, "%s", err.msg);
        ck_assert_int_eq(p.st.nq, 3);
        ck_assert_int_eq(p.st.nk, 5);
        ck_assert(pipeline_stage_present(&p, STAGE_SOURCE));
        pipeline_stage_view(&p, STAGE_WEIGHTS, 1, &v);
        ck_assert_int_eq(v.m.rows, 3);
        ck_assert_int_eq(v.m.cols, 5);
        ck_assert_str_eq(v.row_labels[0], "with");
        ck_assert_str_eq(v.col_labels[0], "Your");
        ck_assert_str_eq(v.col_labels[4], "one");
        for (int i = 0; i < 3; i++) {
            float sum = 0.0f;
            for (int j = 0; j < 5; j++)
                sum += MAT_AT(&v.m, i, j);
            ck_assert_float_eq_tol(sum, 1.0f, 1e-6f); /* every source token seen */
        }
        pipeline_stage_view(&p, STAGE_KEYS, 0, &v);
        ck_assert_str_eq(v.row_labels[1], "journey");
        /* The same weights on each sentence alone: K, V from the source's rows, Q from the target's. */
        cfg.cross = false;
        cfg.mask = ATTN_MASK_NONE;
        run(&on_source, &cfg, "Your journey starts with one", &book_vocab);
        run(&on_target, &cfg, "with one step", &book_vocab);
        ck_assert_mem_eq(p.st.keys.data, on_source.st.keys.data, matrix_size(&p.st.keys) * sizeof(float));
        ck_assert_mem_eq(p.st.values.data, on_source.st.values.data,
                         matrix_size(&p.st.values) * sizeof(float));
        ck_assert_mem_eq(p.st.queries.data, on_target.st.queries.data,
                         matrix_size(&p.st.queries) * sizeof(float));
        ck_assert_mem_eq(p.source.data, on_source.inputs.data, matrix_size(&p.source) * sizeof(float));
        pipeline_destroy(&on_source);
        pipeline_destroy(&on_target);
        pipeline_destroy(&p);
    }
}
END_TEST

/* What cannot attend across sentences is refused, one line naming the option. */
START_TEST(cross_attention_refuses_what_cannot_attend_across)
{
    struct attention_config cfg;
    struct pipeline p;
    struct attn_error err;
    struct vocab wide;

    attention_config_init(&cfg);
    cfg.cross = true;
    attention_config_set_variant(&cfg, ATTN_SIMPLE);
    ck_assert_int_eq(cross(&p, &cfg, "with one", "Your journey", NULL, &err), ATTN_EVALUE);
    ck_assert_msg(strstr(err.msg, "--source: --variant simple has no weights") != NULL, "%s", err.msg);
    attention_config_set_variant(&cfg, ATTN_MHA);
    cfg.mask = ATTN_MASK_CAUSAL;
    ck_assert_int_eq(cross(&p, &cfg, "with one", "Your journey", NULL, &err), ATTN_EVALUE);
    ck_assert_msg(strstr(err.msg, "--mask causal") != NULL, "%s", err.msg);
    cfg.mask = ATTN_MASK_NONE;
    cfg.positional = cfg.positional_learned = true;
    ck_assert_int_eq(cross(&p, &cfg, "with one", "Your journey", NULL, &err), ATTN_EVALUE);
    ck_assert_msg(strstr(err.msg, "--learned-positional") != NULL, "%s", err.msg);
    cfg.positional = cfg.positional_learned = false;
    {
        const char *tmp = test_tmpdir();
        const char *csv = "token,a,b\nYour,1,2\n";
        ck_assert_int_eq(vocab_load_csv(&wide, test_write_file(tmp, "wide.csv", csv, strlen(csv)), &err),
                         ATTN_OK);
        ck_assert_int_eq(cross(&p, &cfg, "with one", "Your journey", &wide, &err), ATTN_ESHAPE);
        ck_assert_msg(strstr(err.msg, "2 dimensions and the target's 3") != NULL, "%s", err.msg);
        vocab_destroy(&wide);
        test_remove_dir(tmp);
    }
}
END_TEST

START_TEST(stage_table_is_consistent)
{
    struct attention_config cfg;
    struct pipeline p;
    char names[512];
    const struct attention_stages *st;

    attention_config_init(&cfg);
    cfg.positional = true;
    cfg.dropout = 0.5;
    cfg.heads = 2;
    cfg.d_out = 4;
    run(&p, &cfg, "Your journey starts with one step", &book_vocab);
    st = &p.st;
    for (int s = 0; s < STAGE_COUNT; s++) {
        enum pipeline_stage back;
        struct pipeline_view v;
        float mean[36];
        ck_assert_int_eq(pipeline_stage_parse(pipeline_stage_name((enum pipeline_stage)s), &back), 0);
        ck_assert_int_eq(back, s);
        /* A transformer block's own stages are a trained model's (check_model). */
        if (PIPELINE_BLOCK_STAGES & FAMILY_STAGE(s)) {
            ck_assert(!pipeline_stage_present(&p, (enum pipeline_stage)s));
            continue;
        }
        /* The notes' dropout of the output and nn-mha's average: theirs alone (below). */
        if (s == STAGE_OUTPUT_DROPPED || s == STAGE_AVERAGED || s == STAGE_SOURCE) {
            ck_assert(!pipeline_stage_present(&p, (enum pipeline_stage)s));
            continue;
        }
        ck_assert(pipeline_stage_present(&p, (enum pipeline_stage)s));
        pipeline_stage_view(&p, (enum pipeline_stage)s, 1, &v);
        ck_assert_ptr_nonnull(v.m.data);
        ck_assert_int_eq(v.m.rows, 6);
        ck_assert_ptr_nonnull(v.row_labels);
        ck_assert_str_ne(pipeline_stage_formula(&p, (enum pipeline_stage)s), "?");
        if (pipeline_stage_per_head((enum pipeline_stage)s)) {
            struct pipeline_view v0;
            pipeline_stage_view(&p, (enum pipeline_stage)s, 0, &v0);
            /* Head 1 is the second (nq, nk) block of the stage's buffer, rows nk apart. */
            ck_assert_ptr_eq(v.m.data, v0.m.data + 36);
            ck_assert_int_eq(v.m.stride, 6);
            ck_assert_ptr_nonnull(v.col_labels);
            /* The heads' mean, each cell's heads summed in order, then / H. */
            ck_assert_int_eq(pipeline_stage_heads_mean(&p, (enum pipeline_stage)s, mean), 0);
            for (int e = 0; e < 36; e++)
                ck_assert(mean[e] == (0.0f + v0.m.data[e] + v.m.data[e]) / 2.0f ||
                          (isnan(mean[e]) && isnan(v0.m.data[e] + v.m.data[e])));
        } else {
            ck_assert_int_eq(pipeline_stage_heads_mean(&p, (enum pipeline_stage)s, mean), -1);
        }
    }
    {
        struct pipeline_view v;
        pipeline_stage_view(&p, STAGE_DROPPED, 0, &v);
        ck_assert_ptr_eq(v.m.data, st->dropped);
        pipeline_stage_view(&p, STAGE_KEYS, 0, &v);
        ck_assert_ptr_eq(v.m.data, st->keys.data);
        ck_assert_int_eq(v.col_group, 2);
    }
    ck_assert_int_eq(pipeline_stage_cells(STAGE_WEIGHTS), CELLS_WEIGHTS);
    ck_assert_int_eq(pipeline_stage_cells(STAGE_DROPPED), CELLS_DROPPED);
    ck_assert_int_eq(pipeline_stage_cells(STAGE_SCORES), CELLS_VALUES);
    ck_assert_str_eq(pipeline_stage_names(&p, ",", names, sizeof names),
                     "embeddings,positional,inputs,queries,keys,values,scores,masked,scaled,"
                     "weights,dropped,context,output");
    ck_assert_int_eq(pipeline_stage_parse("nope", &(enum pipeline_stage){ 0 }), -1);
    pipeline_destroy(&p);

    cfg.positional = false;
    run(&p, &cfg, "Your journey starts with one step", &book_vocab);
    ck_assert(!pipeline_stage_present(&p, STAGE_POSITIONAL));
    ck_assert(!pipeline_stage_present(&p, STAGE_EMBEDDINGS));
    ck_assert_str_eq(pipeline_stage_names(&p, " ", names, sizeof names),
                     "inputs queries keys values scores masked scaled weights dropped context output");
    ck_assert_str_eq(pipeline_stage_names(&p, " ", names, 12), "inputs");
    pipeline_destroy(&p);

    /* The notes' class drops its output, not its weights: output_dropped instead of dropped. */
    attention_config_set_variant(&cfg, ATTN_NOTES);
    cfg.heads = 3;
    run(&p, &cfg, "Your journey starts with one step", &book_vocab);
    ck_assert(!pipeline_stage_present(&p, STAGE_DROPPED));
    ck_assert(pipeline_stage_present(&p, STAGE_OUTPUT_DROPPED));
    ck_assert_int_eq(pipeline_stage_cells(STAGE_OUTPUT_DROPPED), CELLS_DROPPED_VALUES);
    ck_assert_str_eq(pipeline_stage_names(&p, " ", names, sizeof names),
                     "inputs queries keys values scores masked scaled weights context output "
                     "output_dropped");
    {
        struct pipeline_view v;
        int kept = 0;
        pipeline_stage_view(&p, STAGE_OUTPUT_DROPPED, 0, &v);
        ck_assert_ptr_eq(v.m.data, p.st.output_dropped.data);
        ck_assert_int_eq(v.m.rows, 6);
        ck_assert_int_eq(v.m.cols, 3); /* d_model = d_in */
        ck_assert_ptr_eq(p.st.dropped, p.st.weights); /* the weights are not dropped */
        for (int e = 0; e < 18; e++) {
            float want = p.st.keep[e] ? p.st.output.data[e] * p.st.dropout_scale : 0.0f;
            ck_assert_float_eq(p.st.output_dropped.data[e], want);
            kept += p.st.keep[e];
        }
        ck_assert(kept > 0 && kept < 18);
    }
    pipeline_destroy(&p);

    /* nn.MultiheadAttention also returns its heads' weights averaged: sum_h dropped_h / H. */
    attention_config_set_variant(&cfg, ATTN_NN_MHA);
    cfg.heads = 3;
    run(&p, &cfg, "Your journey starts with one step", &book_vocab);
    ck_assert(pipeline_stage_present(&p, STAGE_DROPPED));
    ck_assert(pipeline_stage_present(&p, STAGE_AVERAGED));
    ck_assert(!pipeline_stage_present(&p, STAGE_OUTPUT_DROPPED));
    {
        struct pipeline_view v;
        pipeline_stage_view(&p, STAGE_AVERAGED, 0, &v);
        ck_assert_int_eq(v.m.rows, 6);
        ck_assert_int_eq(v.m.cols, 6);
        ck_assert_ptr_nonnull(v.col_labels);
        for (int e = 0; e < 36; e++) {
            float sum = p.st.dropped[e] + p.st.dropped[36 + e] + p.st.dropped[72 + e];
            ck_assert_float_eq(v.m.data[e], sum / 3.0f);
        }
    }
    pipeline_destroy(&p);
}
END_TEST

/* Two pipelines computed at once in two threads: each gets the bits of one computed alone. */
struct threaded {
    const struct attention_config *cfg;
    const struct vocab *vocab;
    const float *want;
    size_t floats;
    int bad;
};

static const char threaded_sentence[] =
    "Your journey starts with one step and every step after it is another small journey "
    "that starts the same way with one more step";

static void *
compute_many(void *arg)
{
    struct threaded *t = arg;

    for (int r = 0; r < 20; r++) {
        struct pipeline p;
        struct pipeline_source src = { .sentence = threaded_sentence, .vocab = t->vocab };
        if (pipeline_create(&p, t->cfg, &src, NULL) != ATTN_OK) {
            t->bad++;
            continue;
        }
        t->bad += memcmp(p.st.output.data, t->want, t->floats * sizeof(float)) != 0;
        t->bad += memcmp(p.st.dropped, t->want + t->floats, 2 * sizeof(float)) != 0;
        pipeline_destroy(&p);
    }
    return NULL;
}

START_TEST(pipelines_in_two_threads_are_independent)
{
    struct attention_config cfg;
    struct pipeline ref;
    struct threaded t[2];
    pthread_t th[2];
    float *want;
    size_t floats;

    attention_config_init(&cfg);
    cfg.d_out = 64;
    cfg.heads = 4;
    cfg.dropout = 0.1;
    cfg.positional = true;
    run(&ref, &cfg, threaded_sentence, &book_vocab);
    floats = matrix_size(&ref.st.output);
    want = malloc((floats + 2) * sizeof(float));
    memcpy(want, ref.st.output.data, floats * sizeof(float));
    memcpy(want + floats, ref.st.dropped, 2 * sizeof(float));
    pipeline_destroy(&ref);
    for (int i = 0; i < 2; i++) {
        t[i] = (struct threaded){ &cfg, &book_vocab, want, floats, 0 };
        ck_assert_int_eq(pthread_create(&th[i], NULL, compute_many, &t[i]), 0);
    }
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(pthread_join(th[i], NULL), 0);
        ck_assert_int_eq(t[i].bad, 0);
    }
    free(want);
}
END_TEST

/*
 * A family made here, outside the core: inputs are each token's position
 * and length, attended over by the simple variant's passes.  It shows the
 * seam: pipeline_create, the stage accessor and presence work for it
 * without any change to the book's family.
 */
static int echo_destroyed;

static enum attn_status
echo_create(struct pipeline *p, const struct attention_config *cfg, const struct pipeline_source *src,
            struct attn_error *err)
{
    struct attention_config simple = *cfg;
    enum attn_status st;
    struct rng r;

    attention_config_set_variant(&simple, ATTN_SIMPLE);
    st = tokenizer_split(src->sentence, &p->tokens, err);
    if (st != ATTN_OK)
        return st;
    p->query_labels = (const char *const *)p->tokens.text;
    p->key_labels = (const char *const *)p->tokens.text;
    p->made_up = calloc((size_t)p->tokens.count, 1);
    p->d_in = 2;
    st = matrix_create(&p->inputs, p->tokens.count, 2, err);
    if (st == ATTN_OK)
        st = params_create(&p->params, &simple, 2, err);
    if (st == ATTN_OK)
        st = attention_stages_create(&p->st, &simple, 2, p->tokens.count, p->tokens.count, err);
    if (st != ATTN_OK)
        return st;
    for (int i = 0; i < p->tokens.count; i++) {
        MAT_AT(&p->inputs, i, 0) = (float)i;
        MAT_AT(&p->inputs, i, 1) = (float)strlen(p->tokens.text[i]);
    }
    rng_seed(&r, cfg->seed);
    attention_project(&p->st, &simple, &p->inputs, &p->inputs, &p->params);
    attention_attend(&p->st, &simple, &p->params, &r);
    return ATTN_OK;
}

static void
echo_destroy(struct pipeline *p)
{
    (void)p;
    echo_destroyed++;
}

static const struct family echo_family = {
    "echo", "positions and lengths",
    (FAMILY_STAGE(STAGE_COUNT) - 1) & ~(FAMILY_STAGE(STAGE_EMBEDDINGS) | FAMILY_STAGE(STAGE_POSITIONAL)) &
        ~PIPELINE_BLOCK_STAGES,
    echo_create, NULL, NULL, echo_destroy, NULL, NULL, 0, NULL,
};

START_TEST(a_family_plugs_in_through_the_seam)
{
    struct attention_config cfg;
    struct pipeline p;
    struct pipeline q;
    struct pipeline_source src = { .sentence = "ab cde f", .family = &echo_family };
    struct pipeline_view v;
    struct attn_error err;

    attention_config_init(&cfg);
    cfg.positional = true; /* the book's encoding: not this family's stage */
    ck_assert_int_eq(pipeline_create(&p, &cfg, &src, &err), ATTN_OK);
    ck_assert_ptr_eq(p.family, &echo_family);
    ck_assert(!pipeline_stage_present(&p, STAGE_POSITIONAL));
    ck_assert(!pipeline_stage_present(&p, STAGE_EMBEDDINGS));
    ck_assert(pipeline_stage_present(&p, STAGE_WEIGHTS));
    pipeline_stage_view(&p, STAGE_QUERIES, 0, &v);
    ck_assert_int_eq(v.m.rows, 3);
    ck_assert(MAT_AT(&v.m, 1, 1) == 3.0f); /* "cde" */
    pipeline_stage_view(&p, STAGE_SCORES, 0, &v);
    ck_assert(MAT_AT(&v.m, 2, 1) == 2.0f * 1.0f + 1.0f * 3.0f);
    /* No rebuild or reattend of its own: the pipeline computes it anew. */
    ck_assert(!pipeline_attend_only(&p, &cfg));
    ck_assert_int_eq(pipeline_rebuild(&q, &p, &cfg, &src, &err), ATTN_OK);
    ck_assert_ptr_eq(q.family, &echo_family);
    ck_assert_ptr_eq(family_find("book"), &family_book);
    ck_assert_ptr_null(family_find("echo"));
    echo_destroyed = 0;
    pipeline_destroy(&p);
    pipeline_destroy(&q);
    ck_assert_int_eq(echo_destroyed, 2);
}
END_TEST

/* A family that says it needs 600 bytes and may hold 1,000: its own budget. */
static enum attn_status
sized_estimate(const struct attention_config *cfg, const struct pipeline_source *src,
               size_t *bytes, struct attn_error *err)
{
    (void)cfg;
    (void)src;
    (void)err;
    *bytes = 600;
    return ATTN_OK;
}

static size_t
sized_budget(const struct pipeline_source *src, const char **what)
{
    (void)src;
    *what = "the sized family's budget";
    return 1000;
}

static const struct family sized_family = {
    "sized", "echo with a budget of its own",
    (FAMILY_STAGE(STAGE_COUNT) - 1) & ~(FAMILY_STAGE(STAGE_EMBEDDINGS) | FAMILY_STAGE(STAGE_POSITIONAL)) &
        ~PIPELINE_BLOCK_STAGES,
    echo_create, NULL, NULL, echo_destroy, sized_estimate, NULL, 0, sized_budget,
};

/*
 * A family's own budget (a trained model's: the machine's memory less its
 * weights) counts the pipeline a rebuild holds, as attnscope's own limit
 * does (issue 23, item 8: a model's rebuild in the view once needed 160%
 * of RAM, budgeted as if the pipeline shown were not there).
 */
START_TEST(a_rebuild_counts_the_pipeline_it_holds)
{
    struct attention_config cfg;
    struct pipeline p;
    struct pipeline q;
    struct pipeline_source src = { .sentence = "ab cde f", .family = &sized_family };
    struct attn_error err;

    attention_config_init(&cfg);
    ck_assert_int_eq(pipeline_create(&p, &cfg, &src, &err), ATTN_OK);
    ck_assert_uint_eq(p.bytes, 600);
    ck_assert_int_eq(pipeline_rebuild(&q, &p, &cfg, &src, &err), ATTN_ELIMIT);
    ck_assert_msg(strstr(err.msg, "beside the 0 MiB of what is shown (kept until") != NULL &&
                      strstr(err.msg, "the sized family's budget") != NULL,
                  "%s", err.msg);
    /* Without the pipeline shown, the same fits. */
    ck_assert_int_eq(pipeline_rebuild(&q, NULL, &cfg, &src, &err), ATTN_OK);
    pipeline_destroy(&q);
    pipeline_destroy(&p);
}
END_TEST

static Suite *
pipeline_seams_suite(void)
{
    Suite *s = suite_create("pipeline_seams");
    TCase *tc = tcase_create("seams");
    /* (a hang guard, not a timing: CK_TIMEOUT_MULTIPLIER scales it under the sanitizers) */
    tcase_set_timeout(tc, 30);

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, learned_positions_come_after_the_weights);
    tcase_add_test(tc, bad_configurations_are_refused);
    tcase_add_test(tc, the_memory_estimate_is_what_is_allocated);
    tcase_add_test(tc, a_rebuild_counts_the_pipeline_it_holds);
    tcase_add_test(tc, memory_past_the_limit_is_refused_before_allocating);
    tcase_add_test(tc, stage_table_is_consistent);
    tcase_add_test(tc, cross_attention_takes_keys_and_values_from_the_source);
    tcase_add_test(tc, cross_attention_refuses_what_cannot_attend_across);
    tcase_add_test(tc, pipelines_in_two_threads_are_independent);
    tcase_add_test(tc, a_family_plugs_in_through_the_seam);
    tcase_add_test(tc, shortcuts_compute_what_a_fresh_pipeline_computes);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(pipeline_seams_suite)
