/*
 * rng.h: PyTorch's CPU random numbers, bit for bit.
 *
 * attnscope draws its parameters and dropout masks exactly as PyTorch does
 * after torch.manual_seed(seed), so the book's seeded tables come out the
 * same.  The algorithms (a 32-bit Mersenne Twister and the transformations
 * PyTorch applies to its outputs) are described in doc/architecture.md.
 */
#ifndef ATTNSCOPE_RNG_H
#define ATTNSCOPE_RNG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RNG_MT_N 624

struct rng {
    uint32_t state[RNG_MT_N];
    int index; /* next state word to temper; RNG_MT_N means "twist first" */
    bool have_normal;   /* a normal sample kept from the last Box-Muller pair ... */
    double next_normal; /* ... (PyTorch's generator keeps one for small tensors) */
};

/* The two ways PyTorch builds draw Bernoulli masks (nn.Dropout). */
enum rng_path {
    RNG_PATH_DEFAULT, /* builds without MKL: one double uniform per element */
    RNG_PATH_MKL      /* MKL builds: one 32-bit draw seeds an MCG31m1 stream */
};

/* torch.manual_seed(seed): only the low 32 bits count. */
void rng_seed(struct rng *r, uint64_t seed);

/* One 32-bit Mersenne Twister output. */
uint32_t rng_next32(struct rng *r);

/* Two outputs, the first in the high word (PyTorch's random64()). */
uint64_t rng_next64(struct rng *r);

/* A double in [0, 1) from 53 bits of rng_next64(). */
double rng_uniform_f64(struct rng *r);

/*
 * Tensor.uniform_(from, to) on a float32 tensor of n elements, in memory
 * order: one 32-bit draw each, x = (r & 0xFFFFFF) / 2^24, out = fma(x, to -
 * from, from) in float.  torch.rand is uniform_(0, 1).
 */
void rng_uniform_f32(struct rng *r, float *out, size_t n, double from, double to);

/* nn.Linear's weight init, kaiming_uniform_(a = sqrt(5)), on n elements. */
void rng_kaiming_uniform(struct rng *r, float *weight, size_t n, int fan_in);
/*
 * nn.init.xavier_uniform_ (gain 1) on a weight of fan_out rows and fan_in
 * columns: uniform_(-a, a), a = sqrt(3) * sqrt(2 / (fan_in + fan_out)).
 */
void rng_xavier_uniform(struct rng *r, float *weight, size_t n, int fan_in, int fan_out);

/*
 * Tensor.normal_(mean, std) (torch.randn is normal_(0, 1)) on a float32
 * tensor of n contiguous elements, in memory order, as PyTorch's CPU
 * kernels at the AVX2 capability draw them (rng_normal.c; Debian's build,
 * and x86 builds on processors with AVX2 but not AVX-512):
 *   n >= 16: n uniform floats as torch.rand, then Box-Muller on each block
 *     of 16, the last partial block drawn again whole;
 *   n < 16: one double Box-Muller pair per two elements, the second kept
 *     in r for the next element (manual_seed drops it).
 */
void rng_normal_f32(struct rng *r, float *out, size_t n, double mean, double std);

/* nn.Linear's bias init, uniform_(-1/sqrt(fan_in), 1/sqrt(fan_in)). */
void rng_bias_uniform(struct rng *r, float *bias, size_t n, int fan_in);

/*
 * nn.Linear(in, out, bias) initialisation: weight (out, in) from
 * kaiming_uniform_(a = sqrt(5)), then, if bias is not NULL, bias (out) from
 * uniform_(-1/sqrt(in), 1/sqrt(in)).
 */
void rng_linear_init(struct rng *r, float *weight, float *bias, int in, int out);

/*
 * Tensor.bernoulli_(keep_p) on n elements: keep[i] = 1 with probability
 * keep_p.  If draw is not NULL it receives the uniform number each decision
 * was made from (keep when draw < keep_p), for the inspector.
 */
void rng_bernoulli(struct rng *r, enum rng_path path, double keep_p,
                   unsigned char *keep, float *draw, size_t n);

/* The factor nn.Dropout(p) multiplies kept elements by: fl(1 / fl(1 - p)). */
float rng_dropout_scale(double p);

/*
 * nn.Dropout(p) in training mode on n elements (0 < p < 1): draws the mask
 * with rng_bernoulli(1 - p) and writes out[i] = keep ? x[i] * k : x[i] * 0.
 * keep and draw may be NULL when the caller does not keep them.
 */
void rng_dropout(struct rng *r, enum rng_path path, double p, const float *x,
                 float *out, unsigned char *keep, float *draw, size_t n);

/* Advances the generator past the draws of one rng_dropout over n elements. */
void rng_dropout_skip(struct rng *r, enum rng_path path, size_t n);

#endif
