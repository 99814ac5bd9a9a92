/*
 * locate.h: finding a model where the tools people run keep it: Ollama's
 * store (a name and tag: its manifest, its GGUF blob, its params and
 * template layers) and LM Studio's folders (publisher/model), with what
 * was looked at when nothing is found (locate/ollama.c).  What it finds is
 * a place (struct model_place): the model family opens what is there.
 */
#ifndef ATTNSCOPE_LOCATE_LOCATE_H
#define ATTNSCOPE_LOCATE_LOCATE_H

#include <stdbool.h>
#include <stddef.h>

#include "attnscope/base/status.h"

#define MODEL_PATH_MAX 4096

/*
 * The settings an Ollama model's params layer gives (its Modelfile's
 * PARAMETER lines): the defaults of the writing for that model, which the
 * command line overrides.  Each has_* says whether the layer names it.
 */
#define MODEL_STOP_MAX 4
struct model_params {
    bool has_temperature, has_top_k, has_top_p;
    double temperature, top_p;
    int top_k;
    int num_ctx;                          /* 0: not given */
    char stop[MODEL_STOP_MAX][64];        /* the stop strings */
    int n_stop;
    char from[MODEL_PATH_MAX + 100];      /* the params blob, or "": none */
};

/* Where a model's files are (model_locate, model_ollama, model_lmstudio fill it). */
struct model_place {
    char dir[MODEL_PATH_MAX]; /* the folder to read (a weights file's folder) */
    char weights[MODEL_PATH_MAX]; /* the weights file what names, or "" */
    char name[256];           /* its short name */
    /*
     * What the user should know of the choice, or "": a folder here named
     * like a cached model is read instead of it (and says so), a folder
     * here that is not a model gives way to the cached one.
     */
    char note[512];
    struct model_params params; /* an Ollama model's params layer, if any */
    char template_path[MODEL_PATH_MAX + 100]; /* an Ollama model's template layer, or "" */
};

/*
 * what as a model Ollama keeps (NAME[:TAG], as `ollama run` takes it; see
 * ollama.c): 0 with its GGUF blob in where->weights, 1 when Ollama has no
 * such model, -1 with err set when its manifest or blob is damaged.
 */
int model_ollama(const char *what, struct model_place *where, struct attn_error *err);
/*
 * Where model_ollama looked for what and what it found of that name, for
 * a message: "Ollama's folders (OLLAMA_MODELS=..., ...) have qwen3:0.6b,
 * not qwen3:latest", or "... have no qwen3 (`ollama pull qwen3` fetches
 * it)"; "" when what cannot be an Ollama name.  Returns how many tags of
 * that name it found, the first of them ("qwen3:0.6b") into first.
 */
int model_ollama_looked(const char *what, char *buf, size_t size, char *first, size_t first_size);
/*
 * what as LM Studio's publisher/model (the folder its downloads keep under
 * ~/.lmstudio/models or ~/.cache/lm-studio/models): 0 with the folder's
 * one GGUF in where->weights, 1 when neither folder has it (looked says
 * where it looked), -1 with err set when the folder holds no GGUF or
 * several quantizations (named, to choose from).
 */
int model_lmstudio(const char *what, struct model_place *where, char *looked, size_t looked_size,
                   struct attn_error *err);

#endif
