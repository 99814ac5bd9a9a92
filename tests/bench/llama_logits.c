/*
 * llama_logits.c: llama.cpp's next-token probabilities for every position
 * of a list of token ids, through its library (libllama), for
 * tests/bench/bf16_accuracy.py to set beside PyTorch's.  An oracle's
 * helper, never built by make or CI: the script compiles it against a
 * llama.cpp build.
 *
 *     llama_logits MODEL.gguf THREADS TOP KV ID...
 *
 * (KV: f16, llama.cpp's defaults: a float16 cache, flash attention when
 * it likes; or f32: a float32 cache and flash attention off) prints "position rank id probability" lines, the TOP likeliest tokens of
 * each position, the softmax taken in double over llama.cpp's logits, and
 * on standard error the milliseconds llama_decode took (the forward with
 * every position's logits, as attnscope's view needs them): the second of
 * two forwards of the ids, the cache cleared between, so that building the
 * graph and faulting the weights in are not counted.
 */
#include <math.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "llama.h"

static void
quiet(enum ggml_log_level level, const char *text, void *data)
{
    (void)level;
    (void)text;
    (void)data;
}

int
main(int argc, char **argv)
{
    struct llama_model_params mp;
    struct llama_context_params cp;
    struct llama_model *model;
    struct llama_context *ctx;
    struct llama_batch batch;
    int n, threads, top, vocab;

    if (argc < 6) {
        fprintf(stderr, "usage: llama_logits MODEL.gguf THREADS TOP KV ID...\n");
        return 2;
    }
    threads = atoi(argv[2]);
    top = atoi(argv[3]);
    n = argc - 5;
    llama_log_set(quiet, NULL);
    llama_backend_init();
    mp = llama_model_default_params();
    model = llama_model_load_from_file(argv[1], mp);
    if (model == NULL) {
        fprintf(stderr, "llama_logits: cannot load %s\n", argv[1]);
        return 1;
    }
    cp = llama_context_default_params();
    cp.n_ctx = (uint32_t)(n < 64 ? 64 : n);
    cp.n_batch = cp.n_ctx;
    cp.n_ubatch = cp.n_ctx;
    cp.n_threads = threads;
    cp.n_threads_batch = threads;
    if (strcmp(argv[4], "f32") == 0) {
        cp.type_k = GGML_TYPE_F32;
        cp.type_v = GGML_TYPE_F32;
        cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
    }
    ctx = llama_init_from_model(model, cp);
    vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
    batch = llama_batch_init(n, 0, 1);
    for (int i = 0; i < n; i++) {
        batch.token[i] = atoi(argv[5 + i]);
        batch.pos[i] = i;
        batch.n_seq_id[i] = 1;
        batch.seq_id[i][0] = 0;
        batch.logits[i] = 1;
    }
    batch.n_tokens = n;
    {
        struct timespec t0, t1;
        int rc;
        rc = ctx == NULL ? -1 : llama_decode(ctx, batch);
        if (rc == 0)
            llama_memory_clear(llama_get_memory(ctx), true);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        if (rc == 0)
            rc = llama_decode(ctx, batch);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (rc != 0) {
            fprintf(stderr, "llama_logits: the forward failed\n");
            return 1;
        }
        fprintf(stderr, "decode_ms\t%.1f\n",
                (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
    }
    for (int i = 0; i < n; i++) {
        const float *lg = llama_get_logits_ith(ctx, i);
        double most = -INFINITY, sum = 0.0;
        char *taken = calloc((size_t)vocab, 1);
        for (int v = 0; v < vocab; v++)
            most = lg[v] > most ? lg[v] : most;
        for (int v = 0; v < vocab; v++)
            sum += exp(lg[v] - most);
        for (int r = 1; r <= top && taken != NULL; r++) {
            int best = -1;
            for (int v = 0; v < vocab; v++)
                if (!taken[v] && (best < 0 || lg[v] > lg[best]))
                    best = v;
            taken[best] = 1;
            printf("%d %d %d %.9g\n", i, r, best, exp(lg[best] - most) / sum);
        }
        free(taken);
    }
    llama_batch_free(batch);
    llama_free(ctx);
    llama_model_free(model);
    llama_backend_free();
    return 0;
}
