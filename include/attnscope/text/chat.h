/*
 * chat.h: one user message in a model's chat template, as Hugging Face's
 * apply_chat_template(messages, add_generation_prompt=True) renders it.
 *
 * attnscope runs no Jinja: it recognises which family a template is from
 * the markers its text holds (as llama.cpp's llm_chat_detect_template
 * does) and writes that family's turn itself.  What a family's templates
 * differ in is read from the text too: whether bos_token comes first, a
 * default system message (Qwen2.5's "You are Qwen ..."), Llama 3.1's dated
 * system block.  A template of no known family is refused by name.
 */
#ifndef ATTNSCOPE_CHAT_H
#define ATTNSCOPE_CHAT_H

#include <stdbool.h>
#include <stddef.h>

#include "attnscope/base/status.h"

enum chat_kind {
    CHAT_CHATML,     /* <|im_start|>user\n...<|im_end|>\n (Qwen, SmolLM, Olmo 3) */
    CHAT_PHI4,       /* <|im_start|>user<|im_sep|>...<|im_end|> */
    CHAT_LLAMA3,     /* <|start_header_id|>user<|end_header_id|>\n\n...<|eot_id|> */
    CHAT_GEMMA,      /* <start_of_turn>user\n...<end_of_turn>\n */
    CHAT_PHI3,       /* <|user|>\n...<|end|>\n */
    CHAT_OLMO2,      /* <|user|>\n...\n (Olmo 2, Tulu) */
    CHAT_MISTRAL,    /* [INST]...[/INST] (Mistral Nemo, the v3 tokenizers) */
    CHAT_MISTRAL_V1, /* [INST] ... [/INST] (Mistral 7B Instruct v0.1, v0.2) */
};

struct chat_template {
    enum chat_kind kind;
    const char *name;  /* "ChatML", "Llama 3" ... */
    bool bos;          /* bos_token first */
    bool dated;        /* Llama 3.1's system block: its knowledge date and today's */
    bool trim;         /* the message trimmed of white space (Jinja's | trim) */
    char system[1024]; /* the system message the template writes when none is given, or "" */
};

/*
 * The family of the template text tmpl into t: 0, or -1 with err naming
 * what (the file and key it came from) when it is none attnscope knows.
 */
int chat_detect(const char *tmpl, const char *what, struct chat_template *t,
                struct attn_error *err);

/*
 * user as one user turn of t, with the generation prompt: a string the
 * caller frees, or NULL when out of memory.  bos is the tokenizer's
 * bos_token text (used when t->bos); date the day Llama 3.1's system block
 * names ("26 Jul 2024", what Hugging Face renders as strftime_now("%d %b
 * %Y")).
 */
char *chat_render(const struct chat_template *t, const char *bos, const char *date,
                  const char *user);

/* The families chat_detect knows, for messages: "ChatML (Qwen, SmolLM), ...". */
const char *chat_known(void);

#endif
