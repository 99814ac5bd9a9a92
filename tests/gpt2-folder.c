/*
 * gpt2-folder.c: writes a GPT-2 folder of random weights of any shape
 * (tests/gpt2_random.h), for the test scripts:
 *
 *     tests/gpt2-folder DIR N_LAYER N_HEAD N_EMBD N_POSITIONS VOCAB [SEED]
 *
 * config.json and model.safetensors; the tokenizer is the script's to add
 * (the tiny fixture's vocab.json and merges.txt have 317 tokens).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "gpt2_random.h"

int
main(int argc, char **argv)
{
    struct decoder_config cfg = {
        .n_layer = 0, .n_head = 0, .d_model = 0, .n_ctx = 0, .vocab_size = 0, .d_mlp = 0,
        .eps = 1e-5f, .scale_attn_weights = true, .scale_by_layer = false, .tied = true,
    };

    if (argc < 7) {
        fprintf(stderr, "usage: gpt2-folder DIR N_LAYER N_HEAD N_EMBD N_POSITIONS VOCAB [SEED]\n");
        return 2;
    }
    cfg.n_layer = atoi(argv[2]);
    cfg.n_head = atoi(argv[3]);
    cfg.d_model = atoi(argv[4]);
    cfg.n_ctx = atoi(argv[5]);
    cfg.vocab_size = atoi(argv[6]);
    cfg.d_mlp = 4 * cfg.d_model;
    if (cfg.n_layer < 1 || cfg.n_head < 1 || cfg.d_model < cfg.n_head || cfg.n_ctx < 1 ||
        cfg.vocab_size < 1) {
        fprintf(stderr, "gpt2-folder: every size must be positive, n_embd at least n_head\n");
        return 2;
    }
    if (gpt2_random_folder(argv[1], &cfg, 0.2f, argc > 7 ? (unsigned)atoi(argv[7]) : 1, NULL) != 0) {
        perror(argv[1]);
        return 1;
    }
    return 0;
}
