/* cpu.c: choosing the kernels' instruction set (see cpu.h). */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "attnscope/kernels/cpu.h"

static enum cpu_isa chosen;
static pthread_once_t decided = PTHREAD_ONCE_INIT;

static enum cpu_isa
detect(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    const char *force = getenv("ATTNSCOPE_ISA");
    int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    int avx512 = __builtin_cpu_supports("avx512f") && avx2;

    if (force != NULL && strcmp(force, "portable") == 0)
        return CPU_PORTABLE;
    if (force != NULL && strcmp(force, "avx2") == 0)
        return avx2 ? CPU_AVX2 : CPU_PORTABLE;
    if (avx512)
        return CPU_AVX512;
    if (avx2)
        return CPU_AVX2;
#endif
    return CPU_PORTABLE;
}

static void
decide(void)
{
    chosen = detect();
}

enum cpu_isa
cpu_isa(void)
{
    pthread_once(&decided, decide);
    return chosen;
}

enum cpu_isa
cpu_isa_limit(enum cpu_isa max)
{
    enum cpu_isa best;

    pthread_once(&decided, decide);
    best = detect();
    chosen = max < best ? max : best;
    return chosen;
}

const char *
cpu_isa_name(void)
{
    static const char *const names[] = { "portable", "avx2", "avx512" };
    return names[cpu_isa()];
}
