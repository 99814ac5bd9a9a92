/*
 * llama_random.h: Llama-style model folders of random weights in the
 * shapes of real models (SmolLM2-135M and -360M, Qwen2.5-0.5B, Qwen3-0.6B,
 * Llama 3.2 1B and 3B, Llama 3.1 8B, Gemma 3 270M with its sliding windows
 * and with every layer full), for the
 * benchmark (tests/bench) and for trying the view on a model's real size
 * where no weights can be downloaded.  config.json as Hugging Face's
 * configs for those models say (their sizes, rope_theta, eps, tying) and
 * model.safetensors in BF16 under Hugging Face's names, written a tensor at
 * a time from the format's description.  The tokenizer is the caller's to
 * add (tests/fixtures/tokenizers).
 */
#ifndef ATTNSCOPE_TESTS_LLAMA_RANDOM_H
#define ATTNSCOPE_TESTS_LLAMA_RANDOM_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct llama_shape {
    const char *name, *model_type;
    int hidden, inner, layers, heads, kv, head_dim, vocab, positions;
    double theta, eps;
    int tied, qk_norm;
    int llama3; /* Llama 3's rope_scaling of this factor (low 1, high 4, original 8192), or 0 */
    int qkv_bias; /* (Qwen2's) */
    /*
     * Gemma 3's (model_type gemma3_text): every pattern-th layer full, the
     * others sliding over window keys (window 0: every layer full); its four
     * norms a block and query_pre_attn_scalar = head_dim.
     */
    int window, pattern;
};

static const struct llama_shape llama_shapes[] = {
    { "smollm2-135m", "llama", 576, 1536, 30, 9, 3, 64, 49152, 8192, 100000.0, 1e-5, 1, 0, 0, 0, 0, 0 },
    { "smollm2-360m", "llama", 960, 2560, 32, 15, 5, 64, 49152, 8192, 100000.0, 1e-5, 1, 0, 0, 0, 0, 0 },
    { "qwen2.5-0.5b", "qwen2", 896, 4864, 24, 14, 2, 64, 151936, 32768, 1000000.0, 1e-6, 1, 0, 0,
      1, 0, 0 },
    { "qwen3-0.6b", "qwen3", 1024, 3072, 28, 16, 8, 128, 151936, 40960, 1000000.0, 1e-6, 1, 1, 0,
      0, 0, 0 },
    { "llama3.2-1b", "llama", 2048, 8192, 16, 32, 8, 64, 128256, 131072, 500000.0, 1e-5, 1, 0, 32,
      0, 0, 0 },
    { "llama3.2-3b", "llama", 3072, 8192, 28, 24, 8, 128, 128256, 131072, 500000.0, 1e-5, 1, 0, 32,
      0, 0, 0 },
    { "llama3.1-8b", "llama", 4096, 14336, 32, 32, 8, 128, 128256, 131072, 500000.0, 1e-5, 0, 0, 8,
      0, 0, 0 },
    { "gemma3-270m", "gemma3_text", 640, 2048, 18, 4, 1, 256, 262144, 32768, 1000000.0, 1e-6, 1,
      1, 0, 0, 512, 6 },
    { "gemma3-270m-full", "gemma3_text", 640, 2048, 18, 4, 1, 256, 262144, 32768, 1000000.0, 1e-6,
      1, 1, 0, 0, 0, 6 },
};

static inline const struct llama_shape *
llama_shape_find(const char *name)
{
    for (size_t i = 0; i < sizeof llama_shapes / sizeof llama_shapes[0]; i++)
        if (strcmp(llama_shapes[i].name, name) == 0)
            return &llama_shapes[i];
    return NULL;
}

/* The shapes' names, ", " between them. */
static inline const char *
llama_shape_names(void)
{
    static char names[256];

    names[0] = '\0';
    for (size_t i = 0; i < sizeof llama_shapes / sizeof llama_shapes[0]; i++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
                 llama_shapes[i].name);
    return names;
}

/* One tensor to write: its name and shape (d1 0: a vector). */
struct llama_tensor {
    char name[64];
    size_t d0, d1;
};

/* The tensors of shape s, in the order written; their count. */
static inline size_t
llama_tensors(const struct llama_shape *s, struct llama_tensor *t)
{
    const size_t C = (size_t)s->hidden, F = (size_t)s->inner;
    const size_t Q = (size_t)s->heads * (size_t)s->head_dim;
    const size_t K = (size_t)s->kv * (size_t)s->head_dim;
    size_t k = 0;

#define LLAMA_T(a, b, ...) \
    (snprintf(t[k].name, sizeof t[k].name, __VA_ARGS__), t[k].d0 = (a), t[k].d1 = (b), k++)
    LLAMA_T((size_t)s->vocab, C, "model.embed_tokens.weight");
    for (int l = 0; l < s->layers; l++) {
        const int gemma = strcmp(s->model_type, "gemma3_text") == 0;
        LLAMA_T(C, 0, "model.layers.%d.input_layernorm.weight", l);
        LLAMA_T(Q, C, "model.layers.%d.self_attn.q_proj.weight", l);
        LLAMA_T(K, C, "model.layers.%d.self_attn.k_proj.weight", l);
        LLAMA_T(K, C, "model.layers.%d.self_attn.v_proj.weight", l);
        if (s->qkv_bias) {
            LLAMA_T(Q, 0, "model.layers.%d.self_attn.q_proj.bias", l);
            LLAMA_T(K, 0, "model.layers.%d.self_attn.k_proj.bias", l);
            LLAMA_T(K, 0, "model.layers.%d.self_attn.v_proj.bias", l);
        }
        LLAMA_T(C, Q, "model.layers.%d.self_attn.o_proj.weight", l);
        if (s->qk_norm) {
            LLAMA_T((size_t)s->head_dim, 0, "model.layers.%d.self_attn.q_norm.weight", l);
            LLAMA_T((size_t)s->head_dim, 0, "model.layers.%d.self_attn.k_norm.weight", l);
        }
        LLAMA_T(C, 0, "model.layers.%d.post_attention_layernorm.weight", l);
        if (gemma) {
            LLAMA_T(C, 0, "model.layers.%d.pre_feedforward_layernorm.weight", l);
            LLAMA_T(C, 0, "model.layers.%d.post_feedforward_layernorm.weight", l);
        }
        LLAMA_T(F, C, "model.layers.%d.mlp.gate_proj.weight", l);
        LLAMA_T(F, C, "model.layers.%d.mlp.up_proj.weight", l);
        LLAMA_T(C, F, "model.layers.%d.mlp.down_proj.weight", l);
    }
    LLAMA_T(C, 0, "model.norm.weight");
    if (!s->tied)
        LLAMA_T((size_t)s->vocab, C, "lm_head.weight");
#undef LLAMA_T
    return k;
}

/*
 * folder (made if absent) gets config.json and model.safetensors of shape
 * s: BF16 weights drawn uniform in [-scale, scale] (norms' scales near 1)
 * from seed; or, when sparse, no weights written at all (the file's data a
 * hole of zeros, as large as the shape says, taking no disk: a model
 * larger than any machine's memory).  0, or -1 (errno) when a file cannot
 * be written.
 */
static inline int
llama_folder_write(const char *folder, const struct llama_shape *s, float scale, unsigned seed,
                   int sparse)
{
    const size_t most = 4 + 18 * (size_t)s->layers;
    struct llama_tensor *t = malloc(most * sizeof *t);
    char *header = malloc(160 * most + 64);
    uint16_t *row = NULL;
    char path[4096];
    char scaling[256] = "";
    char gemma[8192] = "";
    size_t count, len = 0, at = 0, widest = 0;
    FILE *f;

    if (t == NULL || header == NULL || (mkdir(folder, 0777) != 0 && errno != EEXIST)) {
        free(t);
        free(header);
        return -1;
    }
    count = llama_tensors(s, t);
    len += (size_t)sprintf(header + len, "{");
    for (size_t i = 0; i < count; i++) {
        const size_t bytes = t[i].d0 * (t[i].d1 ? t[i].d1 : 1) * 2;
        if (t[i].d1)
            len += (size_t)sprintf(header + len,
                                   "%s\"%s\":{\"dtype\":\"BF16\",\"shape\":[%zu,%zu],"
                                   "\"data_offsets\":[%zu,%zu]}",
                                   i ? "," : "", t[i].name, t[i].d0, t[i].d1, at, at + bytes);
        else
            len += (size_t)sprintf(header + len,
                                   "%s\"%s\":{\"dtype\":\"BF16\",\"shape\":[%zu],"
                                   "\"data_offsets\":[%zu,%zu]}",
                                   i ? "," : "", t[i].name, t[i].d0, at, at + bytes);
        at += bytes;
        if ((t[i].d1 ? t[i].d1 : t[i].d0) > widest)
            widest = t[i].d1 ? t[i].d1 : t[i].d0;
    }
    len += (size_t)sprintf(header + len, "}");
    while (len % 8 != 0)
        header[len++] = ' ';
    row = malloc(widest * sizeof *row);
    snprintf(path, sizeof path, "%s/model.safetensors", folder);
    f = row != NULL ? fopen(path, "wb") : NULL;
    if (f != NULL) {
        for (int b = 0; b < 8; b++)
            fputc((int)(((uint64_t)len >> (8 * b)) & 255), f);
        fwrite(header, 1, len, f);
        if (sparse && (fflush(f) != 0 || ftruncate(fileno(f), (off_t)(8 + len + at)) != 0)) {
            fclose(f);
            f = NULL;
        }
        for (size_t i = 0; i < count && !sparse && f != NULL; i++) {
            const size_t width = t[i].d1 ? t[i].d1 : t[i].d0;
            const size_t rows = t[i].d1 ? t[i].d0 : 1;
            for (size_t r = 0; r < rows; r++) {
                for (size_t c = 0; c < width; c++) {
                    union {
                        float f;
                        uint32_t u;
                    } v;
                    seed = seed * 1103515245u + 12345u;
                    v.f = ((float)(seed >> 8) / 16777216.0f * 2.0f - 1.0f) * scale;
                    if (!t[i].d1 && strstr(t[i].name, "bias") == NULL) /* (a norm's scale: near 1) */
                        v.f += 1.0f;
                    row[c] = (uint16_t)(v.u >> 16); /* bf16: the upper half, truncated */
                }
                fwrite(row, sizeof *row, width, f);
            }
        }
        if (f != NULL && fclose(f) != 0)
            f = NULL;
    }
    free(row);
    free(t);
    free(header);
    if (f == NULL)
        return -1;
    if (s->llama3)
        snprintf(scaling, sizeof scaling,
                 ", \"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": %d.0, "
                 "\"low_freq_factor\": 1.0, \"high_freq_factor\": 4.0, "
                 "\"original_max_position_embeddings\": 8192}",
                 s->llama3);
    if (strcmp(s->model_type, "gemma3_text") == 0) {
        /* Its own keys: the layers' kinds, the local RoPE base, the scalar, the activation. */
        size_t g = (size_t)snprintf(gemma, sizeof gemma,
                                    ", \"sliding_window\": %d, \"rope_local_base_freq\": 10000.0, "
                                    "\"query_pre_attn_scalar\": %d, \"hidden_activation\": "
                                    "\"gelu_pytorch_tanh\", \"layer_types\": [",
                                    s->window > 0 ? s->window : 512, s->head_dim);
        for (int l = 0; l < s->layers && g < sizeof gemma - 32; l++)
            g += (size_t)snprintf(gemma + g, sizeof gemma - g, "%s\"%s\"", l ? ", " : "",
                                  s->window > 0 && (l + 1) % s->pattern != 0 ? "sliding_attention"
                                                                             : "full_attention");
        snprintf(gemma + g, sizeof gemma - g, "]");
    }
    snprintf(path, sizeof path, "%s/config.json", folder);
    f = fopen(path, "w");
    if (f == NULL)
        return -1;
    fprintf(f,
            "{\"architectures\": [\"%s\"], \"model_type\": \"%s\", \"hidden_size\": %d, "
            "\"intermediate_size\": %d, \"num_hidden_layers\": %d, \"num_attention_heads\": %d, "
            "\"num_key_value_heads\": %d, \"head_dim\": %d, \"vocab_size\": %d, "
            "\"max_position_embeddings\": %d, \"rope_theta\": %.1f, \"rms_norm_eps\": %g, "
            "%s\"tie_word_embeddings\": %s, \"torch_dtype\": \"bfloat16\"%s%s}\n",
            strcmp(s->model_type, "qwen3") == 0         ? "Qwen3ForCausalLM"
            : strcmp(s->model_type, "qwen2") == 0       ? "Qwen2ForCausalLM"
            : strcmp(s->model_type, "gemma3_text") == 0 ? "Gemma3ForCausalLM"
                                                        : "LlamaForCausalLM",
            s->model_type, s->hidden, s->inner, s->layers, s->heads, s->kv, s->head_dim, s->vocab,
            s->positions, s->theta, s->eps,
            strcmp(s->model_type, "gemma3_text") == 0 ? "" : "\"hidden_act\": \"silu\", ",
            s->tied ? "true" : "false", scaling, gemma);
    return fclose(f) == 0 ? 0 : -1;
}

static inline int
llama_random_folder(const char *folder, const struct llama_shape *s, float scale, unsigned seed)
{
    return llama_folder_write(folder, s, scale, seed, 0);
}

#endif
