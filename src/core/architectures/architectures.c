/*
 * architectures.c: every architecture attnscope reads (see architecture.h),
 * in the order a file without a config.json is matched to them: the first
 * whose layout's marker the file has.
 */
#include "config.h"

#include <stddef.h>

#include "attnscope/architectures/windowed.h"
#include "attnscope/architectures/gpt2.h"
#include "attnscope/architectures/llama.h"
#include "attnscope/architectures/qwen35.h"

const struct architecture *const architectures[] = {
    &arch_gpt2, &arch_llama, &arch_qwen2, &arch_qwen3, &arch_gemma3, &arch_olmo3,
    &arch_gemma2, &arch_qwen3_moe, &arch_olmoe, &arch_mixtral, &arch_gpt_oss, &arch_qwen35,
    &arch_qwen35_moe, &arch_qwen3_next, NULL,
};
