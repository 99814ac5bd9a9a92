/*
 * cpu.h: which vector instructions the numeric kernels may use.
 *
 * Chosen once from the CPU; ATTNSCOPE_ISA=avx2 or =portable asks for a
 * narrower set (for tests and comparisons).  Every choice computes the
 * same bits: the kernels differ in speed only.
 */
#ifndef ATTNSCOPE_CPU_H
#define ATTNSCOPE_CPU_H

enum cpu_isa { CPU_PORTABLE, CPU_AVX2, CPU_AVX512 };

enum cpu_isa cpu_isa(void);
const char *cpu_isa_name(void);

/*
 * Narrows the instruction set to at most max (never beyond what the CPU
 * has), as ATTNSCOPE_ISA does, and returns the one now in force.  For tests
 * that compare the kernels in one process; not for use while other threads
 * compute.
 */
enum cpu_isa cpu_isa_limit(enum cpu_isa max);

#endif
