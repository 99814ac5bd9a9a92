/* cpu.c: choosing the kernels' instruction set (see cpu.h). */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

#include "attnscope/kernels/cpu.h"

static enum cpu_isa chosen;
static pthread_once_t decided = PTHREAD_ONCE_INIT;

static const char *const names[CPU_ISAS] = {
    [CPU_PORTABLE] = "portable", [CPU_NEON] = "neon", [CPU_AVX2] = "avx2", [CPU_AVX512] = "avx512",
};

#if defined(__x86_64__) && defined(__GNUC__)
/* F16C, from CPUID leaf 1 (ECX bit 29): clang 14's __builtin_cpu_supports does not know it. */
static bool
has_f16c(void)
{
    unsigned a, b, c, d;

    return __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & (1u << 29)) != 0;
}
#endif

bool
cpu_isa_has(enum cpu_isa isa)
{
    switch (isa) {
    case CPU_PORTABLE:
        return true;
    case CPU_NEON:
#if defined(__aarch64__)
        return true;
#else
        return false;
#endif
    case CPU_AVX2:
    case CPU_AVX512:
#if defined(__x86_64__) && defined(__GNUC__)
        /* (F16C too: the half-precision kernels widen with it) */
        if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma") || !has_f16c())
            return false;
        return isa == CPU_AVX2 || __builtin_cpu_supports("avx512f");
#else
        return false;
#endif
    }
    return false;
}

/* The widest the CPU has. */
static enum cpu_isa
widest(void)
{
    for (int isa = CPU_ISAS - 1; isa > CPU_PORTABLE; isa--)
        if (cpu_isa_has((enum cpu_isa)isa))
            return (enum cpu_isa)isa;
    return CPU_PORTABLE;
}

int
cpu_isa_named(const char *name)
{
    for (int isa = 0; isa < CPU_ISAS; isa++)
        if (strcmp(name, names[isa]) == 0)
            return isa;
    return -1;
}

static enum cpu_isa
detect(void)
{
    const char *force = getenv("ATTNSCOPE_ISA");
    const int asked = force != NULL ? cpu_isa_named(force) : -1;

    if (asked >= 0 && cpu_isa_has((enum cpu_isa)asked))
        return (enum cpu_isa)asked;
    return widest();
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
    pthread_once(&decided, decide);
    if (cpu_isa_has(max)) {
        chosen = max;
        return chosen;
    }
    /* (x86's below max: AVX2 for AVX-512; NEON has none below but portable) */
    chosen = max == CPU_AVX512 && cpu_isa_has(CPU_AVX2) ? CPU_AVX2 : CPU_PORTABLE;
    return chosen;
}

const char *
cpu_isa_label(enum cpu_isa isa)
{
    return (unsigned)isa < CPU_ISAS ? names[isa] : "?";
}

const char *
cpu_isa_name(void)
{
    return names[cpu_isa()];
}

const char *
cpu_isa_describe(char *buf, size_t size)
{
    size_t at = 0;
    int n = snprintf(buf, size, "%s (this CPU has", cpu_isa_name());

    at = n > 0 && (size_t)n < size ? (size_t)n : 0;
    for (int isa = CPU_ISAS - 1, first = 1; isa >= 0; isa--)
        if (cpu_isa_has((enum cpu_isa)isa)) {
            n = snprintf(buf + at, size - at, "%s %s", first ? "" : ",", names[isa]);
            at += n > 0 && (size_t)n < size - at ? (size_t)n : 0;
#if defined(__aarch64__) && defined(__linux__) && defined(HWCAP_ASIMDDP) && defined(HWCAP_ASIMDHP)
            if (isa == CPU_NEON) {
                const unsigned long caps = getauxval(AT_HWCAP);
                n = snprintf(buf + at, size - at, "%s%s%s",
                             caps & (HWCAP_ASIMDDP | HWCAP_ASIMDHP) ? " with" : "",
                             caps & HWCAP_ASIMDDP ? " dotprod" : "",
                             caps & HWCAP_ASIMDHP ? " fp16" : "");
                at += n > 0 && (size_t)n < size - at ? (size_t)n : 0;
            }
#endif
            first = 0;
        }
    snprintf(buf + at, size - at, ")");
    return buf;
}

const char *
cpu_isa_check(char *buf, size_t size)
{
    const char *force = getenv("ATTNSCOPE_ISA");
    const int asked = force != NULL ? cpu_isa_named(force) : -1;
    char has[96];

    if (force == NULL || force[0] == '\0' || (asked >= 0 && cpu_isa_has((enum cpu_isa)asked)))
        return NULL;
    snprintf(buf, size, "ATTNSCOPE_ISA=%.40s: %s; running on %s", force,
             asked < 0 ? "not an instruction set (avx512, avx2, neon or portable)"
                       : "this CPU has not got it",
             cpu_isa_describe(has, sizeof has));
    return buf;
}
