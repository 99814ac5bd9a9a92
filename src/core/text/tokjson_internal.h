/*
 * tokjson_internal.h: a tokenizer.json's pipeline as tokjson_parse.c reads
 * it and tokjson.c runs it: not part of the core's interface.
 */
#ifndef ATTNSCOPE_TOKJSON_INTERNAL_H
#define ATTNSCOPE_TOKJSON_INTERNAL_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdbool.h>
#include <stddef.h>

enum norm_kind { NORM_NFC, NORM_NFD, NORM_NFKC, NORM_NFKD, NORM_REPLACE, NORM_PREPEND };

struct norm_step {
    enum norm_kind kind;
    pcre2_code *re; /* Replace's pattern (a string is compiled as a literal) */
    char *content;  /* Replace's and Prepend's text */
};

enum pre_kind { PRE_SPLIT, PRE_BYTE_LEVEL };

/* How a Split keeps what its pattern matches (Hugging Face's SplitDelimiterBehavior). */
enum split_behavior { SPLIT_REMOVED, SPLIT_ISOLATED, SPLIT_PREVIOUS, SPLIT_NEXT, SPLIT_CONTIGUOUS };

struct pre_step {
    enum pre_kind kind;
    pcre2_code *re;                /* Split's pattern; ByteLevel's GPT-2 pattern when use_regex */
    enum split_behavior behavior;
    bool invert;                   /* Split's invert: what the pattern matches is what stays */
    bool prefix_space;             /* ByteLevel's add_prefix_space */
};

struct added {
    char *text;
    size_t len;
    int id;
    bool normalized, lstrip, rstrip, single_word;
};

#define POST_MAX 8

struct tokjson {
    struct norm_step *norm;
    int norms;
    struct pre_step *pre;
    int pres;
    char *path; /* the tokenizer.json, for messages */
    struct added *added; /* longest first */
    int addeds;
    /*
     * The added tokens by their first byte: by_first[first[c] .. first[c +
     * 1]) are the indices of those starting with byte c, longest first (a
     * text's every place is tried against only those: Gemma has 6,415).
     */
    int first[257];
    int *by_first;
    int prefix[POST_MAX], suffix[POST_MAX]; /* TemplateProcessing's ids around the text */
    int prefixes, suffixes;
};

#endif
