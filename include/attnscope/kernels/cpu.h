/*
 * cpu.h: which vector instructions the numeric kernels may use.
 *
 * Chosen once from the CPU: AVX-512, else AVX2 (with FMA and F16C) on
 * x86-64; NEON (Advanced SIMD, in every AArch64 CPU) on ARM; else the
 * portable C.  ATTNSCOPE_ISA=avx512, avx2, neon or portable forces one the
 * CPU has (for tests and comparisons; one it has not is refused by
 * cpu_isa_check).  Every choice computes the same bits: the kernels differ
 * in speed only.
 */
#ifndef ATTNSCOPE_CPU_H
#define ATTNSCOPE_CPU_H

#include <stdbool.h>
#include <stddef.h>

/* (x86's in order of width: code may ask for "AVX2 or wider") */
enum cpu_isa { CPU_PORTABLE, CPU_NEON, CPU_AVX2, CPU_AVX512 };
#define CPU_ISAS (CPU_AVX512 + 1)

enum cpu_isa cpu_isa(void);
const char *cpu_isa_name(void);
/* The name of isa ("avx2"), and the isa a name is (-1: none). */
const char *cpu_isa_label(enum cpu_isa isa);
int cpu_isa_named(const char *name);
/* Whether this CPU has isa (portable: always). */
bool cpu_isa_has(enum cpu_isa isa);
/*
 * What the kernels run, for --version and a writing's summary: "avx512 (this CPU
 * has avx512, avx2, portable)", "neon (this CPU has neon with dotprod fp16,
 * portable)"; into buf.
 */
const char *cpu_isa_describe(char *buf, size_t size);
/*
 * ATTNSCOPE_ISA's value when it names nothing this CPU has, said into buf
 * (a message for the front ends), else NULL: the kernels then ran on the
 * widest the CPU has.
 */
const char *cpu_isa_check(char *buf, size_t size);

/*
 * Narrows the instruction set to max when the CPU has it, else to the
 * widest of its kind below max it has (portable at least), and returns the
 * one now in force.  For tests that compare the kernels in one process;
 * not for use while other threads compute.
 */
enum cpu_isa cpu_isa_limit(enum cpu_isa max);

#endif
